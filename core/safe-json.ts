/**
 * Strict JSON for tool input written by a model.
 *
 * `JSON.parse` keeps the last of two duplicate keys, so `{"cmd":"ls","cmd":"rm -rf /"}` shows one
 * value to a regex reading the text and another to the tool. It also makes `__proto__` an own key
 * that a later spread or merge turns into a prototype change. Both are rejected here, with the
 * position, so the model can correct itself.
 *
 * Objects come out with a null prototype: a field the input lacks reads as `undefined` in the
 * validator, the policy and an inline tool, even when someone has written onto `Object.prototype`.
 */
import { thousands } from './thousands.ts';

/**
 * Property names that reach a prototype when written or read (`o.__proto__`, `o.constructor.prototype`):
 * refused in tool input at any depth, and in schemas at load (check.ts).
 */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** An empty object that inherits nothing. */
export function emptyRecord(): Record<string, unknown> {
  return Object.create(null) as Record<string, unknown>;
}

/**
 * What an object is filled through before `sealRecord` gives it a null prototype: frozen and empty,
 * so a write meets no setter (nothing on Object.prototype sees it). V8 makes an object of
 * `Object.create(null)` a dictionary, where a parsed key costs up to ~0.5 µs to add; one filled
 * this way and then re-parented stays a fast object.
 */
const FILLING: object = Object.freeze(Object.create(null));

/** An empty object to fill (own keys only), then pass to `sealRecord`. */
function fillingRecord(): Record<string, unknown> {
  return Object.create(FILLING) as Record<string, unknown>;
}

/** The filled object, inheriting nothing from here on. */
function sealRecord(record: Record<string, unknown>): Record<string, unknown> {
  return Object.setPrototypeOf(record, null) as Record<string, unknown>;
}

export class JsonInputError extends Error {
  override readonly name = 'JsonInputError';
}

/** Deeper input is refused with a clear message rather than a stack overflow. */
export const MAX_DEPTH = 256;

/** Parses `text` as JSON, rejecting duplicate keys and forbidden keys at any depth. */
export function parseStrictJson(text: string): unknown {
  return new StrictParser(text).parseDocument();
}

/**
 * A deep copy of an already-parsed value (MCP arguments, embedding callers, schema defaults, plugin
 * options), checked on the way for forbidden keys and non-JSON values; its objects inherit nothing. One walk: the copy is the caller's own to fill with defaults,
 * and the path of a failure is only built when there is one (structuredClone after a separate check
 * cost most of a worker call's overhead).
 */
export function copyJsonValue(value: unknown): unknown {
  const path: (string | number)[] = [];
  try {
    return copy(value, path, { left: MAX_COPIED_VALUES });
  } catch (error) {
    if (!(error instanceof JsonInputError)) throw error;
    throw new JsonInputError(`${path.length ? `/${path.join('/')}` : '/'}: ${error.message}`);
  }
}

/**
 * How many values one copy may hold. A value from a worker or a process (`ctx.authorize`'s input)
 * arrives by structured clone, which keeps shared references: a DAG whose levels each hold the next
 * twice is a few hundred bytes there and 2^depth values once copied as a tree (depth 40 filled 4 GB
 * and killed the host). Each value reached counts, however often it is reached. 2^20 is far beyond
 * any tool input (the MCP stdio limit of 10 MiB holds at most ~5M values written as `0,`).
 */
export const MAX_COPIED_VALUES = 1 << 20;

/**
 * The values (objects, arrays, strings, numbers, booleans, nulls) in a JSON value, counted up to
 * past `limit`: an array's items are counted before they are walked, so a long one costs nothing
 * to find too long.
 */
export function countValues(value: unknown, limit: number): number {
  let count = 1;
  const stack = [value];
  while (stack.length > 0 && count <= limit) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      count += v.length;
      if (count <= limit) for (const item of v) if (item !== null && typeof item === 'object') stack.push(item);
      continue;
    }
    for (const key in v) {
      if (++count > limit) break;
      const item = (v as Record<string, unknown>)[key];
      if (item !== null && typeof item === 'object') stack.push(item);
    }
  }
  return count;
}

/**
 * The values in a JSON value, each counted once for each array it sits in at any depth, up to past
 * `limit`: what `uniqueItems` hashes, since it hashes each item whole, and a value inside nested
 * arrays is hashed again at each of them. Hashing reads strings and keys to their end: each
 * `charsPerValue` characters of one count as a value more.
 */
export function countInArrays(value: unknown, limit: number, charsPerValue: number): number {
  let count = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0 && count <= limit) {
    const [v, arrays] = stack.pop()!;
    count += arrays;
    if (typeof v === 'string') count += arrays * Math.floor(v.length / charsPerValue);
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) for (const item of v) stack.push([item, arrays + 1]);
    else
      for (const key in v) {
        count += arrays * Math.floor(key.length / charsPerValue);
        stack.push([(v as Record<string, unknown>)[key], arrays]);
      }
  }
  return count;
}

/**
 * The characters of the strings and keys in a JSON value, counted up to past `limit`; or, given
 * `weigh`, the sum of what it answers for each one's length.
 */
export function countChars(value: unknown, limit: number, weigh = (length: number) => length): number {
  let count = 0;
  const stack = [value];
  while (stack.length > 0 && count <= limit) {
    const v = stack.pop();
    if (typeof v === 'string') count += weigh(v.length);
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) for (const item of v) stack.push(item);
    else
      for (const key in v) {
        count += weigh(key.length);
        stack.push((v as Record<string, unknown>)[key]);
      }
  }
  return count;
}

/** Throws a bare reason; `copyJsonValue` adds the path, which `path` holds at the moment of the throw. */
function copy(value: unknown, path: (string | number)[], budget: { left: number }): unknown {
  if (--budget.left < 0)
    throw new JsonInputError(
      `more than ${thousands(MAX_COPIED_VALUES)} values (a value shared by several places counts each time)`,
    );
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new JsonInputError(`${value} is not a JSON number`);
      return value;
    case 'object': {
      if (value === null) return null;
      if (path.length >= MAX_DEPTH) throw new JsonInputError(`nested deeper than ${MAX_DEPTH} levels`);
      if (Array.isArray(value)) {
        const out: unknown[] = new Array(value.length);
        for (let i = 0; i < value.length; i++) {
          path.push(i);
          if (!(i in value)) throw new JsonInputError('an array hole is not a JSON value');
          out[i] = copy(value[i], path, budget);
          path.pop();
        }
        return out;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) throw new JsonInputError('not a plain JSON object');
      const out = fillingRecord();
      for (const key of Object.keys(value)) {
        path.push(key);
        if (FORBIDDEN_KEYS.has(key)) throw new JsonInputError(`the key "${key}" is not allowed`);
        out[key] = copy((value as Record<string, unknown>)[key], path, budget);
        path.pop();
      }
      return sealRecord(out);
    }
    default:
      throw new JsonInputError(`a ${typeof value} is not a JSON value`);
  }
}

/** The most `plainData` writes out: far beyond any plugin report or config, and a bounded walk to find out. */
const MAX_PLAIN_DATA_BYTES = 16 * 1024 * 1024;

/**
 * Whether `data`'s JSON is surely over `cap` bytes, found in at most ~`cap` steps. A value from a
 * worker or a process (a result, a plugin report) arrives by structured clone, which keeps shared references: a DAG of a few
 * hundred bytes (each level holding the next twice) would be 2^depth values in JSON, and
 * JSON.stringify would hold the host thread for seconds before the size check. Each value visited
 * (each time it is reached, as JSON writes it) costs at least one byte, a string or a key its
 * length, so the walk stops as soon as the count passes the cap; a cycle stops it the same way.
 */
export function jsonLongerThan(data: unknown, cap: number): boolean {
  let bytes = 0;
  const stack: unknown[] = [data];
  while (stack.length) {
    const value = stack.pop();
    bytes += typeof value === 'string' ? value.length + 2 : 1;
    if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON !== 'function') {
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length && bytes <= cap; i++, bytes++) stack.push(value[i]);
      } else {
        for (const key of Object.keys(value)) {
          const item = (value as Record<string, unknown>)[key];
          if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue; // left out of JSON
          bytes += key.length + 3;
          if (bytes > cap) break;
          stack.push(item);
        }
      }
    }
    if (bytes > cap) return true;
  }
  return false;
}

/**
 * A deep copy through JSON whose objects inherit nothing, so the host's walks over a plugin's
 * schemas and annotations read only what the plugin wrote, never `Object.prototype`. A key
 * `__proto__` stays an own property (the contract check names it), as `JSON.parse` makes it.
 * The loader passes the plugin reports of workers, processes and MCP servers through it (they
 * arrive as ordinary objects; an inline one is made plain field by field, plugin-report.ts), and
 * the policy its config.
 */
export function plainData<T>(value: T): T {
  if (jsonLongerThan(value, MAX_PLAIN_DATA_BYTES))
    throw new JsonInputError(
      `over ${MAX_PLAIN_DATA_BYTES / 1024 / 1024} MiB as JSON (a value shared by several places counts each time)`,
    );
  const copy = JSON.parse(JSON.stringify(value)) as T;
  nullPrototypes(copy);
  return copy;
}

/**
 * Re-parents every object of freshly parsed JSON to null, in place. Cheaper than a reviver that
 * copies each object into `Object.create(null)`: that makes each one a slow dictionary object, and
 * the reviver call per value cost the loader more than the parse itself.
 */
function nullPrototypes(value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) nullPrototypes(item);
    return;
  }
  Object.setPrototypeOf(value, null);
  for (const key in value) nullPrototypes((value as Record<string, unknown>)[key]);
}

const C = {
  Tab: 9,
  Newline: 10,
  Return: 13,
  Space: 32,
  Quote: 34,
  Comma: 44,
  Minus: 45,
  Zero: 48,
  Nine: 57,
  Colon: 58,
  OpenBracket: 91,
  Backslash: 92,
  CloseBracket: 93,
  OpenBrace: 123,
  CloseBrace: 125,
} as const;

class StrictParser {
  private i = 0;
  private readonly text: string;
  /** The keys and indexes from the document down to the value being parsed. */
  private readonly at: (string | number)[] = [];

  constructor(text: string) {
    this.text = text;
  }

  parseDocument(): unknown {
    this.skipSpace();
    if (this.i >= this.text.length) this.fail('empty input; expected a JSON object such as {}');
    const value = this.parseValue(0);
    this.skipSpace();
    if (this.i < this.text.length) this.fail('unexpected text after the JSON value');
    return value;
  }

  private parseValue(depth: number): unknown {
    const c = this.text.charCodeAt(this.i);
    if ((c === C.OpenBrace || c === C.OpenBracket) && depth >= MAX_DEPTH)
      this.fail(`nested deeper than ${MAX_DEPTH} levels (at ${this.path()})`);
    if (c === C.OpenBrace) return this.parseObject(depth + 1);
    if (c === C.OpenBracket) return this.parseArray(depth + 1);
    if (c === C.Quote) return this.parseString();
    if (c === C.Minus || (c >= C.Zero && c <= C.Nine)) return this.parseNumber();
    if (this.text.startsWith('true', this.i)) return this.literal(4, true);
    if (this.text.startsWith('false', this.i)) return this.literal(5, false);
    if (this.text.startsWith('null', this.i)) return this.literal(4, null);
    return this.fail(
      this.i >= this.text.length
        ? 'unexpected end of input'
        : `unexpected character ${JSON.stringify(this.text[this.i])}`,
    );
  }

  /** The JSON pointer of the value being parsed, for a message: only a failure pays for the string. */
  private path(): string {
    let path = '';
    for (const segment of this.at) path += `/${segment}`;
    return path;
  }

  private parseObject(depth: number): Record<string, unknown> {
    const out = fillingRecord();
    this.i++;
    this.skipSpace();
    if (this.text.charCodeAt(this.i) === C.CloseBrace) return this.literal(1, sealRecord(out));
    for (;;) {
      this.skipSpace();
      if (this.text.charCodeAt(this.i) !== C.Quote) this.fail('expected a property name in double quotes');
      const keyAt = this.i;
      const key = this.parseString();
      if (FORBIDDEN_KEYS.has(key)) this.fail(`the key "${key}" is not allowed (at ${this.path()}/${key})`, keyAt);
      if (Object.hasOwn(out, key))
        this.fail(`duplicate key "${key}" (at ${this.path()}/${key}); give each key once`, keyAt);
      this.skipSpace();
      if (this.text.charCodeAt(this.i) !== C.Colon) this.fail('expected ":" after the property name');
      this.i++;
      this.skipSpace();
      this.at.push(key);
      out[key] = this.parseValue(depth);
      this.at.pop();
      this.skipSpace();
      const c = this.text.charCodeAt(this.i++);
      if (c === C.CloseBrace) return sealRecord(out);
      if (c !== C.Comma) this.fail('expected "," or "}"', this.i - 1);
    }
  }

  private parseArray(depth: number): unknown[] {
    const out: unknown[] = [];
    this.i++;
    this.skipSpace();
    if (this.text.charCodeAt(this.i) === C.CloseBracket) return this.literal(1, out);
    for (;;) {
      this.skipSpace();
      this.at.push(out.length);
      out.push(this.parseValue(depth));
      this.at.pop();
      this.skipSpace();
      const c = this.text.charCodeAt(this.i++);
      if (c === C.CloseBracket) return out;
      if (c !== C.Comma) this.fail('expected "," or "]"', this.i - 1);
    }
  }

  private parseString(): string {
    const start = this.i;
    let escaped = false;
    for (let j = start + 1; j < this.text.length; j++) {
      const c = this.text.charCodeAt(j);
      if (c === C.Backslash) {
        escaped = true;
        j++;
      } else if (c === C.Quote) {
        this.i = j + 1;
        if (!escaped) return this.text.slice(start + 1, j);
        try {
          return JSON.parse(this.text.slice(start, j + 1)) as string;
        } catch {
          return this.fail('invalid escape in string', start);
        }
      } else if (c < C.Space) {
        this.fail('control character in string; escape it', start);
      }
    }
    return this.fail('unterminated string', start);
  }

  private parseNumber(): number {
    const start = this.i;
    const m = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    m.lastIndex = start;
    if (!m.test(this.text)) this.fail('invalid number');
    this.i = m.lastIndex;
    const value = Number(this.text.slice(start, this.i));
    // 1e400 is valid JSON text but no double: Infinity would reach the tool while the canonical form says null.
    if (!Number.isFinite(value)) this.fail('number out of range', start);
    return value;
  }

  /** Steps over `length` characters already recognised and yields what they stand for. */
  private literal<T>(length: number, value: T): T {
    this.i += length;
    return value;
  }

  private skipSpace(): void {
    for (;;) {
      const c = this.text.charCodeAt(this.i);
      if (c !== C.Space && c !== C.Newline && c !== C.Return && c !== C.Tab) return;
      this.i++;
    }
  }

  private fail(message: string, at = this.i): never {
    throw new JsonInputError(`${message} at position ${at}`);
  }
}
