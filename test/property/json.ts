// Shared by the property suites: random JSON values with adversarial keys and strings, every way of
// spelling one of them as JSON text, and what the host must make of it (the oracle).
import fc from 'fast-check';

/** Keys the strict parser refuses at any depth (safe-json.ts); rare enough that most inputs are valid. */
export const FORBIDDEN = ['__proto__', 'constructor', 'prototype'] as const;

/** Any UTF-16 code unit, lone surrogates included: what a JS string (and a `\uXXXX` escape) can hold. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

/** Strings NFC changes (decomposed `é`, the Kelvin sign that becomes `K`), lone surrogates, look-alikes of inherited names. */
const TRICKY = [
  'caf\u00e9',
  'cafe\u0301',
  '\u212a',
  'K',
  '\ud800',
  '\udfff',
  'a\ud800b',
  '\ud83d\ude00',
  '',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__proto',
  'Constructor',
  'a/b',
  '~1',
  '"',
  '\\',
  '\u2028',
  '\u0000',
  'a\tb',
  'rm -rf /',
];

const text = (maxLength: number) =>
  fc.oneof(
    { weight: 10, arbitrary: fc.string({ maxLength }) },
    { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength }) },
    { weight: 2, arbitrary: fc.string({ unit: codeUnit, maxLength }) },
    { weight: 3, arbitrary: fc.constantFrom(...TRICKY) },
  );

export const key = fc.oneof(
  { weight: 19, arbitrary: text(6) },
  { weight: 1, arbitrary: fc.constantFrom(...FORBIDDEN) },
);

const number = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 0, 1, 0.1, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, -Number.MAX_VALUE, 2 ** 53, 2 ** 53 + 2),
);

/** Sets an own key as parsed JSON has it: `__proto__` becomes a key, never the prototype. Returns `obj`. */
export function setOwn<T extends object>(obj: T, k: string, v: unknown): T {
  return Object.defineProperty(obj, k, { value: v, enumerable: true, writable: true, configurable: true });
}

function objectOf(entries: [string, unknown][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) setOwn(out, k, v);
  return out;
}

const tree = fc.letrec<{ value: unknown; object: Record<string, unknown> }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, false),
    number,
    text(8),
    fc.array(tie('value'), { maxLength: 4 }),
    tie('object'),
  ),
  object: fc.uniqueArray(fc.tuple(key, tie('value')), { selector: ([k]) => k, maxLength: 5 }).map(objectOf),
}));

/** Any JSON value. */
export const jsonValue = tree.value;
/** A JSON object: what a tool's input is. */
export const jsonObject = tree.object;

/** A small deterministic generator: the spelling of one value is reproducible from its seed (and shrinks with it). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Spelled {
  text: string;
  /** A duplicate key was written somewhere: the text must be refused. */
  duplicated: boolean;
}

/**
 * One of the many JSON texts of `value`: whitespace between tokens, keys in any order, characters
 * escaped or not (`\u0072`, `\/`, hex in either case), numbers as `1.0`, `1e0`, `10E-1`, `-0`. With
 * `duplicate`, objects (the outermost always, when it has a key) repeat one of their keys, spelled
 * another way, with another value.
 */
export function spell(value: unknown, seed: number, duplicate = false): Spelled {
  const rnd = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]!;
  const ws = () => (rnd() < 0.6 ? '' : pick([' ', '\n', '\t', '\r\n  ', '  ']));
  let duplicated = false;

  const hex = (c: number) => {
    const h = c.toString(16).padStart(4, '0');
    return `\\u${rnd() < 0.5 ? h : h.toUpperCase()}`;
  };
  const SHORT: Record<number, string> = { 8: '\\b', 9: '\\t', 10: '\\n', 12: '\\f', 13: '\\r', 34: '\\"', 92: '\\\\' };
  const str = (s: string) => {
    let out = '"';
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      const short = SHORT[c];
      if (short !== undefined || c < 0x20) out += short !== undefined && rnd() < 0.7 ? short : hex(c);
      else if (c === 0x2f) out += rnd() < 0.3 ? '\\/' : '/';
      else out += rnd() < 0.2 ? hex(c) : s[i];
    }
    return `${out}"`;
  };
  const num = (n: number) => {
    const plain = Object.is(n, -0) ? '-0' : String(n);
    const [mantissa, exponent] = plain.split('e') as [string, string | undefined];
    const longer = mantissa.includes('.') ? `${mantissa}0` : `${mantissa}.0`;
    if (exponent !== undefined)
      return pick([plain, `${longer}E${exponent}`, `${mantissa}e${exponent.replace('+', '')}`]);
    return pick([plain, longer, `${plain}e0`, `${plain}E+0`, `${plain}e-0`]);
  };
  const write = (v: unknown, outermost: boolean): string => {
    if (v === null || typeof v === 'boolean') return String(v);
    if (typeof v === 'number') return num(v);
    if (typeof v === 'string') return str(v);
    if (Array.isArray(v)) return `[${ws()}${v.map((item) => write(item, false)).join(`${ws()},${ws()}`)}${ws()}]`;
    const obj = v as Record<string, unknown>;
    const entries = Object.keys(obj).map((k) => `${str(k)}${ws()}:${ws()}${write(obj[k], false)}`);
    for (let i = entries.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [entries[i], entries[j]] = [entries[j]!, entries[i]!];
    }
    const keys = Object.keys(obj);
    if (duplicate && keys.length && (outermost || rnd() < 0.3)) {
      duplicated = true;
      entries.splice(Math.floor(rnd() * (entries.length + 1)), 0, `${str(pick(keys))}${ws()}:${ws()}"rm -rf ~"`);
    }
    return `{${ws()}${entries.join(`${ws()},${ws()}`)}${ws()}}`;
  };
  const text = `${ws()}${write(value, true)}${ws()}`;
  return { text, duplicated };
}

/**
 * What the tool must receive for `value`, worked out independently of the host: strings and keys
 * in NFC, `-0` as `0`; `undefined` when the host must refuse it as invalid JSON (a forbidden key, or
 * two keys of one object that NFC makes one).
 */
export function expectedInput(value: unknown): unknown {
  if (hasForbiddenKey(value)) return undefined;
  const refused = Symbol('refused');
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return v.normalize('NFC');
    if (typeof v === 'number') return v === 0 ? 0 : v;
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map(walk);
    const entries: [string, unknown][] = [];
    const seen = new Set<string>();
    for (const k of Object.keys(v)) {
      const nfc = k.normalize('NFC');
      if (seen.has(nfc)) throw refused;
      seen.add(nfc);
      entries.push([nfc, walk((v as Record<string, unknown>)[k])]);
    }
    return objectOf(entries);
  };
  try {
    return walk(value);
  } catch (error) {
    if (error === refused) return undefined;
    throw error;
  }
}

/** `text` as a regular expression that matches exactly it (rules take no flags, so no `u`). */
export const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Runs per property: enough to meet every kind of input, few enough that a suite takes seconds. */
export const RUNS = 200;

/** Whether a forbidden key occurs at any depth: the strict parser and `copyJsonValue` refuse such input. */
export function hasForbiddenKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hasForbiddenKey);
  return Object.keys(value).some(
    (k) => (FORBIDDEN as readonly string[]).includes(k) || hasForbiddenKey((value as Record<string, unknown>)[k]),
  );
}
