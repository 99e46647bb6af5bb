/**
 * Canonical JSON: one text for one value. Keys sorted at every depth (by UTF-16 code units), no
 * insignificant whitespace, strings with the fewest escapes and in Unicode NFC, numbers in their
 * shortest round-trip form. The policy's regexes, the audit hash and the tool all see this form,
 * so escapes, key order, whitespace and duplicate keys cannot make them disagree.
 */

/** The canonical text of a JSON value. */
export function canonicalJson(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.normalize('NFC'));
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(Object.is(value, -0) ? 0 : value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
      return `{${keys.map((k) => `${JSON.stringify(k.normalize('NFC'))}:${canonicalJson(obj[k])}`).join(',')}}`;
    }
    default:
      return 'null';
  }
}

/** The value as the tool receives it: strings (keys too) normalised to NFC, nothing else changed. */
export function normalizeValue<T>(value: T): T {
  if (typeof value === 'string') return value.normalize('NFC') as T;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(normalizeValue) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k.normalize('NFC')] = normalizeValue(v);
  return out as T;
}
