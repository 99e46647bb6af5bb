// Properties of the strict JSON parser (core/safe-json.ts) on random values spelled every way JSON
// allows, on broken texts, on numbers no double holds and on nesting around the depth limit.
import { expect } from 'chai';
import fc from 'fast-check';
import { copyJsonValue, JsonInputError, MAX_DEPTH, parseStrictJson } from '../../core/safe-json.ts';
import { hasForbiddenKey, jsonObject, jsonValue, RUNS, spell } from './json.ts';

/** The parser's answer: the value, or the JsonInputError it threw (anything else fails the property). */
function strict(text: string): { value: unknown } | { error: JsonInputError } {
  try {
    return { value: parseStrictJson(text) };
  } catch (error) {
    if (error instanceof JsonInputError) return { error };
    throw error;
  }
}

describe('property: the strict JSON parser', () => {
  it('reads every spelling of a value as JSON.parse does, and refuses forbidden keys and duplicate keys', () => {
    fc.assert(
      fc.property(jsonValue, fc.integer(), fc.boolean(), (value, seed, duplicate) => {
        const { text, duplicated } = spell(value, seed, duplicate);
        const got = strict(text);
        if (duplicated || hasForbiddenKey(value)) {
          expect(got, text).to.have.property('error');
        } else {
          expect(got, text).to.deep.equal({ value: JSON.parse(text) });
        }
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('on broken text, throws a JsonInputError with a position, and accepts nothing JSON.parse refuses', () => {
    const edit = fc.tuple(
      fc.nat(),
      fc.constantFrom('', '"', '\\', ',', ':', '{', '}', '[', ']', '-', '.', 'e', '0', '\u0000', '\ud800', ' '),
      fc.nat({ max: 2 }),
    );
    fc.assert(
      fc.property(jsonObject, fc.integer(), fc.array(edit, { minLength: 1, maxLength: 3 }), (value, seed, edits) => {
        let text = spell(value, seed).text;
        for (const [at, insert, remove] of edits) {
          const i = at % (text.length + 1);
          text = text.slice(0, i) + insert + text.slice(i + remove);
        }
        const got = strict(text);
        let parsed: { value: unknown } | undefined;
        try {
          parsed = { value: JSON.parse(text) };
        } catch {
          parsed = undefined;
        }
        if ('error' in got) expect(got.error.message).to.match(/ at position \d+$/);
        else expect(parsed, text).to.deep.equal(got);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('refuses a number that no double holds (it would reach a tool as Infinity), and reads an underflow as 0', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 309, max: 5000 }),
        fc.constantFrom('', '-'),
        fc.constantFrom('e', 'E', 'e+', '0.5e'),
        (exponent, sign, e) => {
          const huge = `{"n":${sign}1${e}${exponent}}`;
          expect(strict(huge), huge)
            .to.have.property('error')
            .with.property('message')
            .that.matches(/number out of range/);
          const digits = `{"n":${sign}1${'0'.repeat(exponent)}}`;
          expect(strict(digits)).to.have.property('error');
          const tiny = strict(`{"n":${sign}1e-${exponent + 20}}`);
          expect(tiny).to.have.property('value');
          expect(Object.is((tiny as { value: { n: number } }).value.n, sign ? -0 : 0)).to.equal(true);
        },
      ),
      { numRuns: RUNS / 4 },
    );
  });

  it('the parser and copyJsonValue accept the same nesting: up to MAX_DEPTH levels', () => {
    fc.assert(
      fc.property(fc.integer({ min: MAX_DEPTH - 3, max: MAX_DEPTH + 3 }), fc.boolean(), (levels, arrays) => {
        const text = arrays
          ? `${'['.repeat(levels)}${']'.repeat(levels)}`
          : `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
        const parsed = strict(text);
        expect('value' in parsed, `${levels} levels`).to.equal(levels <= MAX_DEPTH);
        let copied = true;
        try {
          copyJsonValue(JSON.parse(text));
        } catch (error) {
          expect(error).to.be.instanceOf(JsonInputError);
          copied = false;
        }
        expect(copied, `${levels} levels`).to.equal(levels <= MAX_DEPTH);
      }),
      { numRuns: 30 },
    );
  });

  it('copyJsonValue refuses the values the parser refuses, and copies the rest exactly', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        if (hasForbiddenKey(value)) {
          expect(() => copyJsonValue(value)).to.throw(
            JsonInputError,
            /the key "(__proto__|constructor|prototype)" is not allowed/,
          );
          return;
        }
        const copy = copyJsonValue(value);
        expect(copy).to.deep.equal(value);
        if (value !== null && typeof value === 'object') expect(copy).not.to.equal(value);
      }),
      { numRuns: RUNS },
    );
  });
});
