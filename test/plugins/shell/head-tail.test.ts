import { expect } from 'chai';
import { HeadTail } from '../../../plugins/shell/head-tail.ts';

/** Feeds `text` as UTF-8, `chunkBytes` bytes per push, so that chunks split characters too. */
function collect(maxBytes: number, text: string, chunkBytes: number): HeadTail {
  const output = new HeadTail(maxBytes);
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i += chunkBytes) output.push(bytes.subarray(i, i + chunkBytes));
  return output;
}

describe('plugins/shell HeadTail', () => {
  // 1024 bytes kept, 512 per end: "abc" + 255 × "é" (2 bytes) puts the head's cut inside an "é";
  // the tail's cut falls inside a "€" (3 bytes).
  const text = `abc${'é'.repeat(255)}${'x'.repeat(5000)}${'€'.repeat(200)}z`;

  for (const chunkBytes of [1, 7, 4096, 1 << 20]) {
    it(`cuts head and tail at character boundaries (chunks of ${chunkBytes} bytes)`, () => {
      const output = collect(1024, text, chunkBytes);
      expect(output.truncated).to.equal(true);
      const [head, tail] = output.text().split(/\n\[… \d+ bytes of output omitted .*\]\n/);
      expect(head).to.equal(`abc${'é'.repeat(254)}`); // the split "é" is dropped, not shown as U+FFFD
      expect(tail).to.equal(`${'€'.repeat(170)}z`); // 511 bytes: the split "€" is dropped
      expect(output.text()).to.include(
        `[… ${Buffer.byteLength(text) - Buffer.byteLength(head!) - Buffer.byteLength(tail!)} bytes of output omitted`,
      );
    });
  }

  it('keeps a character that straddles head and tail when nothing is dropped', () => {
    const whole = `abcd€xy`; // 9 bytes, max 10: the head (5 bytes) ends inside "€"
    for (const chunkBytes of [1, 2, 100]) {
      const output = collect(10, whole, chunkBytes);
      expect(output.truncated).to.equal(false);
      expect(output.text()).to.equal(whole);
    }
  });
});
