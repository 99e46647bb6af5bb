import { expect } from 'chai';
import { capOutput, DEFAULT_MAX_OUTPUT_BYTES } from '../core/output.ts';

describe('output cap', () => {
  it('leaves output under the cap alone', () => {
    expect(capOutput('short', 100)).to.deep.equal({ text: 'short', truncated: false });
    const exact = 'x'.repeat(100);
    expect(capOutput(exact, 100)).to.deep.equal({ text: exact, truncated: false });
  });

  it('keeps the head and the tail with a marker that says how much was cut', () => {
    const text = `BEGIN${'.'.repeat(10_000)}END`;
    const { text: out, truncated } = capOutput(text, 1000);
    expect(truncated).to.equal(true);
    expect(out.startsWith('BEGIN')).to.equal(true);
    expect(out.endsWith('END')).to.equal(true);
    expect(out).to.match(/\[… 9008 bytes omitted of 10008: output capped at 1000 bytes, head and tail kept …\]/);
    expect(Buffer.byteLength(out) - Buffer.byteLength(out.match(/\n\n\[.*\]\n\n/)![0])).to.be.at.most(1000);
  });

  it('never splits a multi-byte character', () => {
    const text = '€'.repeat(5000); // 3 bytes each
    const { text: out } = capOutput(text, 1001);
    expect(out).to.not.contain('\uFFFD');
    const [head, tail] = out.split(/\n\n\[.*\]\n\n/);
    expect(head).to.match(/^€+$/);
    expect(tail).to.match(/^€+$/);
  });

  it('counts bytes, not characters', () => {
    expect(capOutput('é'.repeat(600), 1000).truncated).to.equal(true); // 600 chars, 1200 bytes
    expect(capOutput('e'.repeat(600), 1000).truncated).to.equal(false);
  });

  it('documents its default: 64 KiB', () => {
    expect(DEFAULT_MAX_OUTPUT_BYTES).to.equal(65536);
  });
});
