// Canonical JSON: one text per value, whatever the model wrote; and the value the tool receives
// reads back to that same text.
import { expect } from 'chai';
import { canonicalJson, normalizeValue } from '../core/canonical-json.ts';
import { JsonInputError, parseStrictJson } from '../core/safe-json.ts';

/** Parse as the dispatcher does, then the canonical text. */
const canon = (raw: string) => canonicalJson(normalizeValue(parseStrictJson(raw)));

describe('canonical JSON', () => {
  it('sorts keys at every depth (UTF-16 code units) and drops insignificant whitespace', () => {
    expect(canon('{ "b" : { "z":1, "a" : [ { "y":2,"x":1 } ] },\n\t"a":null, "B":true }')).to.equal(
      '{"B":true,"a":null,"b":{"a":[{"x":1,"y":2}],"z":1}}',
    );
    expect(canonicalJson({ '10': 1, '9': 2, a: 3 })).to.equal('{"10":1,"9":2,"a":3}'); // no hoisting of integer-like keys
    expect(canonicalJson({ '\u{1F600}': 1, '\uFFFF': 2 })).to.equal('{"\u{1F600}":1,"\uFFFF":2}'); // code units: a surrogate (D83D) sorts before FFFF
  });

  it('re-encodes strings with the fewest escapes', () => {
    expect(canon('{"s":"\\u0072m \\/ \\u00e9 \\ud83d\\ude00"}')).to.equal('{"s":"rm / é 😀"}');
    expect(canon('{"s":"a\\"b\\\\c"}')).to.equal('{"s":"a\\"b\\\\c"}');
    // Control characters must stay escaped, in their short form where JSON has one.
    expect(canon('{"s":"\\u000a\\u0009\\u0001"}')).to.equal('{"s":"\\n\\t\\u0001"}');
    // U+2028 needs no escape in JSON: kept as is.
    expect(canon('{"s":"\\u2028"}')).to.equal('{"s":"\u2028"}');
    // A lone surrogate is not valid UTF-8 text: escaped.
    expect(canon('{"s":"\\ud800"}')).to.equal('{"s":"\\ud800"}');
  });

  it('writes every number in one form', () => {
    for (const [raw, out] of [
      ['1', '1'],
      ['1.0', '1'],
      ['1e0', '1'],
      ['10e-1', '1'],
      ['100E-2', '1'],
      ['-0', '0'],
      ['-0.0', '0'],
      ['0.1', '0.1'],
      ['1e21', '1e+21'],
      ['123456789012345678901', '123456789012345680000'],
      ['1.5e-7', '1.5e-7'],
    ]) {
      expect(canon(`{"n":${raw}}`), raw).to.equal(`{"n":${out}}`);
    }
  });

  it('normalises strings and keys to NFC, and rejects two keys that are one after NFC', () => {
    expect(canon('{"cafe\\u0301":"cafe\\u0301"}')).to.equal('{"café":"café"}');
    expect(() => canon('{"caf\\u00e9":1,"cafe\\u0301":2}')).to.throw(JsonInputError, /Unicode-normalised/);
    expect(() => normalizeValue({ x: [{ 'cafe\u0301': 1, 'caf\u00e9': 2 }] })).to.throw(JsonInputError, /at \/x\/0/);
    expect(() => canonicalJson({ x: { 'cafe\u0301': 1, 'caf\u00e9': 2 } })).to.throw(JsonInputError, /"café"/);
    // NFC, not NFKC: fullwidth letters are not folded (the shell would not fold them either).
    expect(canon('{"s":"ｒｍ"}')).to.equal('{"s":"ｒｍ"}');
  });

  it('the value the tool receives reads back to the same canonical text (idempotent)', () => {
    const samples = [
      '{"b":[1,2.50,{"d":"e\\u0301","c":-0}],"a":"\\t\\"x\\""}',
      '{"nested":{"z":{"y":{"x":[[],{},"",0,false,null]}}}}',
      '{"s":"\\ud83d\\ude00 \\u00e9 \\u2028 \\\\"}',
    ];
    for (const raw of samples) {
      const value = normalizeValue(parseStrictJson(raw));
      const text = canonicalJson(value);
      expect(JSON.parse(text), raw).to.deep.equal(value);
      expect(canonicalJson(normalizeValue(JSON.parse(text))), raw).to.equal(text);
      expect(canon(text), raw).to.equal(text);
    }
  });

  it('its fast path agrees with a plain reference (NFC, sorted keys, JSON.stringify) on generated values', () => {
    // Characters on both sides of the fast path's bounds: quotes, controls, DEL, the last
    // non-combining code point (U+02FF), the first combining mark (U+0300), surrogates, U+2028.
    const pool = [
      'a',
      'Z',
      ' ',
      '"',
      '\\',
      '\n',
      '\u001f',
      '\u007f',
      'é',
      'e\u0301',
      '\u02ff',
      '\u0300',
      'A\u030a',
      '\u212b',
      '\ud83d\ude00',
      '\ud800',
      '\u2028',
      '/',
    ];
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const text = () => Array.from({ length: rand(6) }, () => pool[rand(pool.length)]).join('');
    const value = (depth: number): unknown => {
      const kind = rand(depth > 2 ? 3 : 5);
      if (kind === 0) return text();
      if (kind === 1) return [0, -0, 1.5, 1e21, -3, 1e-7][rand(6)];
      if (kind === 2) return [true, false, null][rand(3)];
      if (kind === 3) return Array.from({ length: rand(4) }, () => value(depth + 1));
      const obj: Record<string, unknown> = {};
      for (let i = rand(4); i > 0; i--) obj[text()] = value(depth + 1);
      return obj;
    };
    const reference = (v: unknown): unknown => {
      if (typeof v === 'string') return v.normalize('NFC');
      if (Array.isArray(v)) return v.map(reference);
      if (v === null || typeof v !== 'object') return v;
      const entries = Object.entries(v).map(([k, x]) => [k.normalize('NFC'), reference(x)] as const);
      if (new Set(entries.map(([k]) => k)).size !== entries.length) return 'collision';
      return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    };
    let checked = 0;
    for (let i = 0; i < 3000; i++) {
      const v = value(0);
      const expected = JSON.stringify(reference(v));
      if (expected.includes('"collision"')) {
        expect(() => canonicalJson(v)).to.throw(JsonInputError);
        continue;
      }
      expect(canonicalJson(v), expected).to.equal(expected);
      expect(canonicalJson(normalizeValue(v))).to.equal(expected);
      checked++;
    }
    expect(checked).to.be.greaterThan(2000);
  });

  it('normalizeValue changes nothing but Unicode form and -0, and leaves its argument alone', () => {
    const input = { 'e\u0301': ['e\u0301', -0, 1.5, true, null], n: { k: 'v' } };
    const out = normalizeValue(input);
    expect(out).to.deep.equal({ '\u00e9': ['\u00e9', 0, 1.5, true, null], n: { k: 'v' } });
    expect(Object.is((out as unknown as Record<string, unknown[]>)['\u00e9']![1], 0)).to.equal(true);
    expect(Object.keys(input)).to.deep.equal(['e\u0301', 'n']);
  });

  it('normalizeValue copies objects into ones that inherit nothing, on both of its copying paths', () => {
    // One copy is for a key that NFC changes, the other for a value that it changes under a plain key.
    for (const input of [{ 'e\u0301': 1 }, { k: 'e\u0301' }, { n: { 'e\u0301': 1 } }]) {
      const out = normalizeValue(input) as Record<string, unknown>;
      expect(out, JSON.stringify(input)).to.not.equal(input);
      expect(Object.getPrototypeOf(out), JSON.stringify(input)).to.equal(null);
    }
  });
});
