// Properties of the input kept on an audit line (core/audit.ts): cut to the cap on a character
// boundary, flagged when cut, and hashed and measured over the whole canonical input.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { auditedInput, auditLine } from '../../core/audit-lines.ts';
import { canonicalJson, normalizeValue } from '../../core/canonical-json.ts';
import { expectedInput, jsonObject, RUNS } from './json.ts';

describe('property: the input on an audit line', () => {
  it('is the longest whole-character prefix of the canonical input within the cap; its size and hash cover all of it', () => {
    fc.assert(
      fc.property(jsonObject, fc.nat(), (value, at) => {
        if (expectedInput(value) === undefined) return;
        const canonical = canonicalJson(normalizeValue(value));
        const bytes = Buffer.byteLength(canonical);
        const cap = at % (bytes + 2);
        const kept = auditedInput(canonical, cap);
        expect(kept.inputBytes).to.equal(bytes);
        expect(kept.inputSha256).to.equal(createHash('sha256').update(canonical, 'utf8').digest('hex'));
        expect(canonical.startsWith(kept.input)).to.equal(true);
        const keptBytes = Buffer.byteLength(kept.input);
        expect(keptBytes).to.be.at.most(cap);
        expect(kept.inputTruncated === true).to.equal(keptBytes < bytes);
        if (keptBytes < bytes) {
          const next = String.fromCodePoint(canonical.codePointAt(kept.input.length)!);
          expect(keptBytes + Buffer.byteLength(next), 'the next character would have fitted').to.be.above(cap);
        }
        // The line itself is JSON that gives the input back exactly.
        expect(JSON.parse(auditLine(Date.now(), { event: 'decision', ...kept }))).to.include({ input: kept.input });
      }),
      { numRuns: RUNS * 2 },
    );
  });
});
