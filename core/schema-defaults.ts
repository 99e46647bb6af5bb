/**
 * Fills `default`s of a plain JSON Schema into a value. TypeBox's `Default` needs its own type
 * markers, which do not survive JSON (a worker's report, an MCP server's schema), so the host fills
 * defaults itself: missing object properties with a `default`, at every depth, and array items.
 *
 * The schema is a plugin's: only its own keys are read, and a property named `__proto__`,
 * `constructor` or `prototype` is never followed (`value.__proto__` is `Object.prototype`, and a
 * default written through it would reach every object of the host). The contract check refuses
 * such names at load; this walk must be safe before it, since plugin options are filled first.
 */
import { copyJsonValue, FORBIDDEN_KEYS } from './safe-json.ts';

export function applyDefaults(schema: unknown, value: unknown): unknown {
  if (!isRecord(schema)) return value;
  const properties = own(schema, 'properties');
  const items = own(schema, 'items');
  if (isRecord(properties) && isRecord(value) && !Array.isArray(value)) {
    for (const key of Object.keys(properties)) {
      if (FORBIDDEN_KEYS.has(key)) continue;
      const sub = properties[key];
      if (!Object.hasOwn(value, key) || value[key] === undefined) {
        if (isRecord(sub) && Object.hasOwn(sub, 'default')) value[key] = copyJsonValue(sub.default);
      } else {
        value[key] = applyDefaults(sub, value[key]);
      }
    }
  } else if (isRecord(items) && !Array.isArray(items) && Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = applyDefaults(items, value[i]);
  }
  return value;
}

/** Whether a schema declares any `default` (only then is it worth walking per call). */
export function hasDefaults(schema: unknown): boolean {
  return JSON.stringify(schema ?? null).includes('"default":');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object';
}

function own(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}
