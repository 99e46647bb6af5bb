/**
 * Canonical JSON: one text for one value. Keys sorted at every depth (by UTF-16 code units, as in
 * RFC 8785), no insignificant whitespace, strings with the fewest escapes and in Unicode NFC (keys
 * too), numbers in their shortest round-trip form (`1.0`, `1e0` and `10e-1` are all `1`; `-0` is `0`).
 *
 * The dispatcher normalises the parsed input once (`normalizeValue`), and that one value is what the
 * validator checks, what the policy's regexes and the audit hash read (as `canonicalJson`) and what
 * the tool receives: escapes, key order, whitespace and Unicode forms cannot make them disagree.
 */
import { emptyRecord, JsonInputError } from './safe-json.ts';

/** The canonical text of a JSON value. Throws `JsonInputError` when two keys are one after NFC. */
export function canonicalJson(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      // Number-to-string is the shortest text that reads back as the same double (ECMA-262 §6.1.6.1.20).
      return Number.isFinite(value) ? (value === 0 ? '0' : String(value)) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + canonicalJson(value[i]);
        return `${out}]`;
      }
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj);
      if (keys.some(mayChange)) {
        const entries = normalizedEntries(obj, []).sort(byKey);
        return `{${entries.map(([k, v]) => `${quote(k)}:${canonicalJson(v)}`).join(',')}}`;
      }
      keys.sort(); // the default order compares UTF-16 code units
      let out = '{';
      for (const key of keys) {
        const v = obj[key];
        if (v !== undefined) out += `${out.length > 1 ? ',' : ''}${quote(key)}:${canonicalJson(v)}`;
      }
      return `${out}}`;
    }
    default:
      return 'null';
  }
}

/**
 * The value as the tool receives it: strings and keys in NFC, `-0` as `0`, nothing else changed.
 * Two keys of one object that are equal after NFC (`"é"` written precomposed and decomposed) are
 * rejected, not merged: a merge would let one of them hide from a rule that reads the other.
 * Copy on write: what needs no change is returned as is (the argument is never modified); a copied
 * object inherits nothing, like the parser's (safe-json.ts).
 */
export function normalizeValue<T>(value: T): T {
  return normalizeAt(value, []);
}

/** `at`: the keys and indexes down to `value`, joined into a pointer only for a collision's message. */
function normalizeAt<T>(value: T, at: (string | number)[]): T {
  if (typeof value === 'string') return (mayChange(value) ? value.normalize('NFC') : value) as T;
  if (typeof value === 'number') return (value === 0 ? 0 : value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      at.push(i);
      const normal = normalizeAt(item, at);
      at.pop();
      if (!Object.is(normal, item)) {
        out ??= value.slice();
        out[i] = normal;
      }
    }
    return (out ?? value) as T;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  if (keys.some(mayChange)) {
    const out = emptyRecord();
    for (const [k, v] of normalizedEntries(obj, at)) {
      at.push(k);
      out[k] = normalizeAt(v, at);
      at.pop();
    }
    return out as T;
  }
  let out: Record<string, unknown> | undefined;
  for (const key of keys) {
    const item = obj[key];
    at.push(key);
    const normal = normalizeAt(item, at);
    at.pop();
    if (!Object.is(normal, item)) {
      out ??= Object.assign(emptyRecord(), obj);
      out[key] = normal;
    }
  }
  return (out ?? value) as T;
}

/**
 * Whether NFC or JSON escaping may change a string. Below U+0300 nothing composes (the first
 * combining mark is U+0300), so only `"`, `\\`, control characters and U+0300 and up (surrogates
 * included) send a string down the slow path: most inputs never call `normalize`, which costs more
 * than the rest of the canonical form.
 */
// biome-ignore lint/suspicious/noMisleadingCharacterClass: a range of code units, combining marks and all: any of them may change under NFC
const SLOW = /["\\\u0000-\u001f\u0300-\uffff]/;
const mayChange = (text: string) => SLOW.test(text);

function quote(text: string): string {
  return SLOW.test(text) ? JSON.stringify(text.normalize('NFC')) : `"${text}"`;
}

/** The own entries with NFC keys (`undefined` values dropped, as JSON would); throws on a collision. */
function normalizedEntries(obj: Record<string, unknown>, at: (string | number)[]): [string, unknown][] {
  const entries: [string, unknown][] = [];
  const seen = new Set<string>();
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    if (value === undefined) continue;
    const nfc = key.normalize('NFC');
    if (seen.has(nfc))
      throw new JsonInputError(
        `two keys at ${at.length ? `/${at.join('/')}` : '/'} are both "${nfc}" once Unicode-normalised (NFC); give each key once`,
      );
    seen.add(nfc);
    entries.push([nfc, value]);
  }
  return entries;
}

function byKey(a: [string, unknown], b: [string, unknown]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}
