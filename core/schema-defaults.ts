/**
 * Fills `default`s of a plain JSON Schema into a value. TypeBox's `Default` needs its own type
 * markers, which do not survive JSON (a worker's report, an MCP server's schema), so the host fills
 * defaults itself: missing object properties with a `default`, at every depth, and array items.
 */
export function applyDefaults(schema: unknown, value: unknown): unknown {
  if (!schema || typeof schema !== 'object') return value;
  const s = schema as { properties?: Record<string, unknown>; items?: unknown };
  if (s.properties && value && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const [key, sub] of Object.entries(s.properties)) {
      if (obj[key] === undefined) {
        if (sub && typeof sub === 'object' && 'default' in sub) obj[key] = structuredClone((sub as { default: unknown }).default);
      } else {
        obj[key] = applyDefaults(sub, obj[key]);
      }
    }
  } else if (s.items && typeof s.items === 'object' && !Array.isArray(s.items) && Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = applyDefaults(s.items, value[i]);
  }
  return value;
}

/** Whether a schema declares any `default` (only then is it worth walking per call). */
export function hasDefaults(schema: unknown): boolean {
  return JSON.stringify(schema ?? null).includes('"default":');
}
