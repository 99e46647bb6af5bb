import { expect } from 'chai';
import { MAX_SENT_DEPTH, tooLargeToSend, unsendable } from '../../core/runners/wire.ts';

describe('unsendable (what may cross from a worker)', () => {
  it('lets plain JSON data, undefined properties, null-prototype objects and Dates through', () => {
    const bare = Object.assign(Object.create(null) as object, { a: 1 });
    for (const value of [
      'text',
      1.5,
      true,
      null,
      undefined,
      [1, 'a', { b: [null] }],
      { content: 'x', isError: undefined, data: { when: new Date(0), bare } },
    ]) {
      expect(unsendable(value), JSON.stringify(value)).to.equal(undefined);
    }
  });

  it('lets a value shared by two branches through: only a cycle is circular', () => {
    const shared = { n: 1 };
    expect(unsendable({ a: shared, b: [shared] })).to.equal(undefined);
  });

  it('names the path and the problem of each value that would fail or change on the way', () => {
    const cycle: unknown[] = [];
    cycle.push({ back: cycle });
    class Point {
      x = 1;
    }
    const cases: Array<[unknown, string]> = [
      [() => 1, 'the result is a function'],
      [{ data: { fn() {} } }, 'at /data/fn is a function'],
      [{ data: [1, 2n] }, 'at /data/1 is a BigInt (2n); return it as a string or a number'],
      [{ s: Symbol('x') }, 'at /s is a symbol'],
      [cycle, 'at /0/back is a circular reference'],
      [{ e: new TypeError('bad') }, 'at /e is an Error ("bad"); throw it instead of returning it'],
      [{ m: new Map() }, 'at /m is a Map object, not plain JSON data'],
      [{ p: new Point() }, 'at /p is a Point object, not plain JSON data'],
      [{ n: Infinity }, 'at /n is Infinity, which JSON cannot carry'],
    ];
    for (const [value, why] of cases) expect(unsendable(value)).to.equal(why);
  });
});

describe('tooLargeToSend (what a structured clone of a value would copy)', () => {
  const longer = (value: unknown, limit: number) => /characters of text/.test(tooLargeToSend(value, limit) ?? '');

  it('counts a string once per place that holds it, an object once, keys and binary bytes too', () => {
    const text = 'x'.repeat(100);
    expect(longer(Array(10).fill(text), 999)).to.equal(true); // 1,000 characters once copied
    expect(longer(Array(10).fill(text), 1_000)).to.equal(false);
    const shared = { text };
    expect(longer(Array(10).fill(shared), 200)).to.equal(false); // cloned once: 104 characters
    expect(longer({ [text]: 1 }, 99)).to.equal(true);
    expect(longer(new Map([['k', text]]), 100)).to.equal(true);
    expect(longer(new Set([text]), 99)).to.equal(true);
    expect(longer({ b: new Uint8Array(64) }, 64)).to.equal(true);
  });

  it("counts an Error's message, stack and cause, which the clone copies though they are not enumerable", () => {
    const text = 'x'.repeat(100);
    const bare = (error: Error) => Object.assign(error, { stack: '' });
    // Ten errors, one string: small in the heap, ten copies on the host
    expect(
      longer(
        Array.from({ length: 10 }, () => bare(new Error(text))),
        999,
      ),
    ).to.equal(true);
    expect(
      longer(
        Array.from({ length: 10 }, () => bare(new Error('', { cause: { text } }))),
        999,
      ),
    ).to.equal(true);
    expect(longer([Object.assign(new Error('m'), { stack: text })], 99)).to.equal(true);
    expect(longer([bare(new Error(text))], 200)).to.equal(false);
  });

  it(`refuses a value nested deeper than ${MAX_SENT_DEPTH} levels, walking it without recursion`, () => {
    const nest = (levels: number, wrap: (x: unknown) => unknown) => {
      let deep: unknown = 'leaf';
      for (let i = 0; i < levels; i++) deep = wrap(deep);
      return deep;
    };
    expect(
      tooLargeToSend(
        nest(MAX_SENT_DEPTH, (a) => ({ a })),
        1e9,
      ),
    ).to.equal(undefined);
    expect(
      tooLargeToSend(
        nest(MAX_SENT_DEPTH + 1, (a) => [a]),
        1e9,
      ),
    ).to.equal('it nests deeper than 1,000 levels');
    expect(
      tooLargeToSend(
        nest(100_000, (a) => ({ a })),
        1e9,
      ),
    ).to.equal('it nests deeper than 1,000 levels');
  });
});
