/**
 * Canonical JSON: one text for one value. Keys sorted at every depth (by UTF-16 code units, as in
 * RFC 8785), no insignificant whitespace, strings with the fewest escapes and in Unicode NFC (keys
 * too), numbers in their shortest round-trip form (`1.0`, `1e0` and `10e-1` are all `1`; `-0` is `0`).
 *
 * The dispatcher normalises the parsed input once (`normalizeValue`), and that one value is what the
 * validator checks, what the policy's regexes and the audit hash read (as `canonicalJson`) and what
 * the tool receives: escapes, key order, whitespace and Unicode forms cannot make them disagree.
 */
import { JsonInputError } from './safe-json.ts';

/** The canonical text of a JSON value. Throws `JsonInputError` when two keys are one after NFC. */
export function canonicalJson(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.normalize('NFC'));
    case 'number':
      // Number-to-string is the shortest text that reads back as the same double (ECMA-262 §6.1.6.1.20).
      return Number.isFinite(value) ? (value === 0 ? '0' : String(value)) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
      const entries = normalizedEntries(value as Record<string, unknown>, '');
      entries.sort(byKey);
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
    }
    default:
      return 'null';
  }
}

/**
 * The value as the tool receives it: strings and keys in NFC, `-0` as `0`, nothing else changed.
 * Two keys of one object that are equal after NFC (`"é"` written precomposed and decomposed) are
 * rejected, not merged: a merge would let one of them hide from a rule that reads the other.
 */
export function normalizeValue<T>(value: T, path = ''): T {
  if (typeof value === 'string') return value.normalize('NFC') as T;
  if (typeof value === 'number') return (value === 0 ? 0 : value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item, i) => normalizeValue(item, `${path}/${i}`)) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of normalizedEntries(value as Record<string, unknown>, path)) out[k] = normalizeValue(v, `${path}/${k}`);
  return out as T;
}

/** The own entries with NFC keys (`undefined` values dropped, as JSON would); throws on a collision. */
function normalizedEntries(obj: Record<string, unknown>, path: string): [string, unknown][] {
  const entries: [string, unknown][] = [];
  let renamed = false;
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    if (value === undefined) continue;
    const nfc = key.normalize('NFC');
    if (nfc !== key) renamed = true;
    entries.push([nfc, value]);
  }
  if (renamed) {
    const seen = new Set<string>();
    for (const [key] of entries) {
      if (seen.has(key)) {
        throw new JsonInputError(`two keys at ${path || '/'} are both "${key}" once Unicode-normalised (NFC); give each key once`);
      }
      seen.add(key);
    }
  }
  return entries;
}

function byKey(a: [string, unknown], b: [string, unknown]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}
