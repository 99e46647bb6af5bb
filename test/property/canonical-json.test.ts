// Properties of the canonical form (core/canonical-json.ts): one text per value whatever its
// spelling, and parse∘canonical gives back the value the tool receives.
import { expect } from 'chai';
import fc from 'fast-check';
import { canonicalJson, normalizeValue } from '../../core/canonical-json.ts';
import { JsonInputError, parseStrictJson } from '../../core/safe-json.ts';
import { expectedInput, hasForbiddenKey, jsonObject, jsonValue, key, RUNS, setOwn, spell } from './json.ts';

/**
 * RFC 8785's shape, written independently of the host: keys sorted by UTF-16 code units, no
 * whitespace, JSON.stringify's escapes, shortest numbers. Takes a value already in NFC.
 */
function reference(value: unknown): string {
  if (typeof value === 'number') return value === 0 ? '0' : String(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(obj[k])}`).join(',')}}`;
}

/** What the dispatcher does to a parsed value before the policy sees it; JsonInputError → undefined. */
function normalised(value: unknown): unknown {
  try {
    return normalizeValue(value);
  } catch (error) {
    if (error instanceof JsonInputError) return undefined;
    throw error;
  }
}

describe('property: the canonical form', () => {
  it('is one text for every spelling of a value: the reference canonical text of its NFC form', () => {
    fc.assert(
      fc.property(jsonValue, fc.integer(), fc.integer(), (value, seed1, seed2) => {
        const expected = expectedInput(value);
        if (expected === undefined) return;
        const texts = [spell(value, seed1).text, spell(value, seed2).text].map((t) =>
          canonicalJson(normalizeValue(parseStrictJson(t))),
        );
        expect(texts[0]).to.equal(reference(expected));
        expect(texts[1]).to.equal(texts[0]);
        expect(canonicalJson(normalizeValue(value))).to.equal(texts[0]);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('round trips: parsing the canonical text gives the normalised value back, and its canonical text again', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        const expected = expectedInput(value);
        if (expected === undefined) return;
        const normal = normalizeValue(value);
        expect(normal).to.deep.equal(expected); // -0 and 0 differ for deep.equal: -0 must not survive
        const text = canonicalJson(normal);
        const back = parseStrictJson(text);
        expect(back, text).to.deep.equal(expected);
        expect(normalizeValue(back)).to.deep.equal(back);
        expect(canonicalJson(back)).to.equal(text);
        expect(JSON.parse(text)).to.deep.equal(expected);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('never changes its argument, and refuses exactly the objects whose keys NFC makes one', () => {
    const nfcTwins = fc.constantFrom<[string, string]>(
      ['caf\u00e9', 'cafe\u0301'],
      ['\u212a', 'K'],
      ['\u00c5', '\u212b'],
      ['\u1e9b\u0323', '\u017f\u0323\u0307'],
    );
    fc.assert(
      fc.property(jsonObject, fc.option(fc.tuple(nfcTwins, fc.array(key, { maxLength: 2 }))), (value, twins) => {
        if (twins) {
          const [[a, b], path] = twins;
          let at: Record<string, unknown> = value;
          for (const k of path) {
            const next: Record<string, unknown> = {};
            setOwn(at, k, next);
            at = next;
          }
          at[a] = 1;
          at[b] = 2;
        }
        const before = structuredClone(value);
        const got = normalised(value);
        expect(value).to.deep.equal(before);
        if (hasForbiddenKey(value)) return; // the parser refused those before normalizeValue could see them
        const expected = expectedInput(value);
        if (expected === undefined) expect(got, JSON.stringify(value)).to.equal(undefined);
        else expect(got).to.deep.equal(expected);
      }),
      { numRuns: RUNS },
    );
  });
});
