// The strict parser: what JSON.parse lets through and a tool input must not.
import { expect } from 'chai';
import {
  copyJsonValue,
  countChars,
  countInArrays,
  countValues,
  JsonInputError,
  MAX_DEPTH,
  parseStrictJson,
  plainData,
} from '../core/safe-json.ts';

const rejects = (text: string, message: RegExp) =>
  expect(() => parseStrictJson(text), text).to.throw(JsonInputError, message);

describe('strict JSON', () => {
  it('parses what JSON.parse parses, the same way', () => {
    for (const text of [
      '{}',
      '[]',
      '{"a":[1,-2.5e3,true,false,null,"x\\n\\u00e9"]}',
      ' {\n"a" : {"b":{}} }\t',
      '"s"',
      '0',
    ]) {
      expect(parseStrictJson(text), text).to.deep.equal(JSON.parse(text));
    }
  });

  it('rejects duplicate keys, also when one is escaped, at any depth, with the path', () => {
    rejects('{"command":"ls","command":"rm -rf /"}', /duplicate key "command" \(at \/command\)/);
    rejects('{"a":{"k":1,"\\u006b":2}}', /duplicate key "k" \(at \/a\/k\)/);
    rejects('[{"x":1},{"x":1,"x":2}]', /at \/1\/x/);
  });

  it('rejects __proto__, constructor and prototype keys, escaped or not', () => {
    rejects('{"__proto__":{"admin":true}}', /"__proto__" is not allowed/);
    rejects('{"\\u005f_proto__":{}}', /"__proto__" is not allowed/);
    rejects('{"a":{"constructor":{"prototype":{}}}}', /"constructor" is not allowed \(at \/a\/constructor\)/);
    rejects('{"prototype":1}', /"prototype" is not allowed/);
    expect(({} as Record<string, unknown>).admin).to.equal(undefined);
  });

  it('rejects what is not JSON, saying where', () => {
    rejects('', /empty input/);
    rejects('{"a":1} x', /unexpected text after the JSON value at position 8/);
    rejects("{'a':1}", /expected a property name in double quotes/);
    rejects('{"a":1,}', /expected a property name/);
    rejects('{"a":"\u0001"}', /control character in string/);
    rejects('{"a":"\\x"}', /invalid escape/);
    rejects('{"a":01}', /expected "," or "}"/);
    rejects('{"a":NaN}', /unexpected character "N"/);
    rejects('{"a":"open', /unterminated string/);
  });

  it('rejects numbers no double can hold (the tool would get Infinity while the canonical form says null)', () => {
    rejects('{"n":1e400}', /number out of range at position 5/);
    rejects('{"n":-1e309}', /number out of range/);
    expect(parseStrictJson('{"n":1e308}')).to.deep.equal({ n: 1e308 });
  });

  it(`rejects nesting deeper than ${MAX_DEPTH} levels instead of overflowing the stack`, () => {
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    expect(() => parseStrictJson(deep(MAX_DEPTH))).to.not.throw();
    rejects(deep(MAX_DEPTH + 1), /nested deeper than 256 levels/);
    rejects(deep(100_000), /nested deeper/);
  });

  it('makes objects that inherit nothing: a field the input lacks reads as undefined, whatever Object.prototype holds', () => {
    const proto = Object.prototype as Record<string, unknown>;
    try {
      proto.command = 'echo pwned';
      for (const value of [parseStrictJson('{"a":{"b":[{}]}}'), copyJsonValue({ a: { b: [{}] } })]) {
        const v = value as { command?: unknown; a: { command?: unknown; b: { command?: unknown }[] } };
        expect([v.command, v.a.command, v.a.b[0]!.command]).to.deep.equal([undefined, undefined, undefined]);
      }
    } finally {
      delete proto.command;
    }
  });

  it('fills its objects without a setter on Object.prototype seeing the writes: each key is an own property', () => {
    const seen: unknown[] = [];
    Object.defineProperty(Object.prototype, 'command', {
      configurable: true,
      set(value: unknown) {
        seen.push(value);
      },
    });
    try {
      for (const value of [parseStrictJson('{"a":{"command":"ls"}}'), copyJsonValue({ a: { command: 'ls' } })]) {
        const inner = (value as { a: object }).a;
        expect(Object.getPrototypeOf(value)).to.equal(null);
        expect(Object.getPrototypeOf(inner)).to.equal(null);
        expect(Object.getOwnPropertyDescriptor(inner, 'command')?.value).to.equal('ls');
      }
      expect(seen).to.deep.equal([]);
    } finally {
      delete (Object.prototype as Record<string, unknown>).command;
    }
  });

  describe('copyJsonValue (already-parsed input)', () => {
    it('returns a deep copy of plain JSON values and null-prototype objects, sharing nothing with the caller', () => {
      const given = { a: [1, 'x', null, { b: false }] };
      const copied = copyJsonValue(given) as typeof given;
      expect(copied).to.deep.equal(given);
      expect(copied).to.not.equal(given);
      expect(copied.a).to.not.equal(given.a);
      expect(copied.a[3]).to.not.equal(given.a[3]);
      expect(copyJsonValue(Object.assign(Object.create(null) as object, { a: 1 }))).to.deep.equal({ a: 1 });
    });

    it('reads each property once: a getter cannot show the check one value and the tool another', () => {
      let reads = 0;
      const sly = {
        get command() {
          return reads++ === 0 ? 'ls' : { constructor: 1 };
        },
      };
      expect(copyJsonValue(sly)).to.deep.equal({ command: 'ls' });
      expect(reads).to.equal(1);
    });

    it('rejects forbidden own keys, non-finite numbers, class instances, functions, undefined and cycles, naming the path', () => {
      expect(() => copyJsonValue(JSON.parse('{"__proto__":{}}'))).to.throw(
        JsonInputError,
        /^\/__proto__: the key "__proto__" is not allowed$/,
      );
      expect(() => copyJsonValue({ n: NaN })).to.throw(JsonInputError, /^\/n: NaN is not a JSON number$/);
      expect(() => copyJsonValue({ a: [0, { d: new Date() }] })).to.throw(
        JsonInputError,
        /^\/a\/1\/d: not a plain JSON object$/,
      );
      expect(() => copyJsonValue({ f: () => 1 })).to.throw(JsonInputError, /^\/f: a function is not a JSON value$/);
      expect(() => copyJsonValue({ u: undefined })).to.throw(JsonInputError, /a undefined is not a JSON value/);
      expect(() => copyJsonValue(1n)).to.throw(JsonInputError, /^\/: a bigint is not a JSON value$/);
      // biome-ignore lint/suspicious/noSparseArray: the hole is the case under test
      expect(() => copyJsonValue({ a: [1, , 3] })).to.throw(
        JsonInputError,
        /^\/a\/1: an array hole is not a JSON value$/,
      );
      const cycle: Record<string, unknown> = {};
      cycle.self = cycle;
      expect(() => copyJsonValue(cycle)).to.throw(JsonInputError, /nested deeper/);
    });
  });
});

describe('plainData', () => {
  it('copies as JSON would, every object inheriting nothing, a __proto__ key kept as an own key', () => {
    const given = JSON.parse('{"a":[{"b":1},[{"c":null}]],"__proto__":{"x":1},"d":{"e":"f"}}') as Record<
      string,
      unknown
    >;
    const copy = plainData<Record<string, unknown>>({ ...given, skipped: undefined });
    expect(JSON.stringify(copy)).to.equal(JSON.stringify(given));
    const objects = [copy, copy.d, (copy.a as unknown[])[0], ((copy.a as unknown[])[1] as unknown[])[0]];
    for (const o of objects) expect(Object.getPrototypeOf(o)).to.equal(null);
    expect(Array.isArray(copy.a)).to.equal(true);
    expect(Object.hasOwn(copy, '__proto__')).to.equal(true);
    expect(Object.getPrototypeOf(copy['__proto__'])).to.equal(null);
    expect(Object.hasOwn(copy, 'skipped')).to.equal(false);
  });
});

describe('countValues', () => {
  it('counts every JSON value, containers and leaves, and stops once past the limit', () => {
    expect(countValues({ a: [1, 'x', null], b: { c: true } }, 100)).to.equal(7);
    expect(countValues(1, 100)).to.equal(1);
    // A long array is counted whole before its items are walked: they never are.
    const items = Array.from({ length: 1_000 }, () => ({ deep: [1, 2, 3] }));
    expect(countValues(items, 10)).to.equal(1_001);
    expect(
      countValues({ many: Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`k${i}`, i])) }, 10),
    ).to.equal(11);
  });
});

describe('countInArrays', () => {
  it('counts each value once for each array around it, and stops past the limit', () => {
    expect(countInArrays({ a: [1, [2, { b: 3 }]], c: 4 }, 100, 100)).to.equal(1 + 1 + 2 + 2 + 2);
    expect(countInArrays({ a: 1 }, 100, 100)).to.equal(0);
    expect(countInArrays([[[[0]]]], 100, 100)).to.equal(1 + 2 + 3 + 4);
    expect(
      countInArrays(
        Array.from({ length: 1_000 }, () => [0]),
        10,
        100,
      ),
    )
      .to.be.above(10)
      .and.below(20);
  });

  it('counts each charsPerValue characters of a string or key hashed as one value more', () => {
    // The inner array once (in one array), the string twice (in two), each time 1 + 250/100 → 3.
    expect(countInArrays([['x'.repeat(250)]], 1_000, 100)).to.equal(1 + 2 * 3);
    expect(countInArrays([{ ['k'.repeat(300)]: 1 }], 1_000, 100)).to.equal(1 + 3 + 1);
    expect(countInArrays({ ['k'.repeat(300)]: 'v'.repeat(300) }, 1_000, 100)).to.equal(0);
  });
});

describe('countChars', () => {
  it('counts the characters of strings and keys at any depth, and stops past the limit', () => {
    expect(countChars({ ab: ['cde', { f: 'g' }, 1, null, true] }, 100)).to.equal(2 + 3 + 1 + 1);
    expect(
      countChars(
        Array.from({ length: 1_000 }, () => 'xxxxxxxxxx'),
        25,
      ),
    )
      .to.be.above(25)
      .and.below(40);
  });
});
