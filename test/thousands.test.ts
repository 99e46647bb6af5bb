import { expect } from 'chai';
import fc from 'fast-check';
import { thousands } from '../core/thousands.ts';

describe('thousands', () => {
  it("writes an integer as toLocaleString('en-US') does", () => {
    for (const n of [0, 7, 999, 1_000, 12_345, 999_999, 1_000_000, 50_000_000, -1_234_567, Number.MAX_SAFE_INTEGER])
      expect(thousands(n), String(n)).to.equal(n.toLocaleString('en-US'));
    fc.assert(fc.property(fc.integer(), (n) => thousands(n) === n.toLocaleString('en-US')));
  });
});
