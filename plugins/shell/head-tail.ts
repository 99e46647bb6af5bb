/**
 * Keeps the first and the last bytes of a stream and counts the rest, in bounded memory whatever
 * the command prints: the head says what ran, the tail holds the error or the summary.
 */
export class HeadTail {
  readonly #half: number;
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  readonly #tail: Buffer[] = [];
  #tailBytes = 0;
  /** Every byte seen. */
  total = 0;

  constructor(maxBytes: number) {
    this.#half = Math.floor(maxBytes / 2);
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.#headBytes < this.#half) {
      const take = chunk.subarray(0, this.#half - this.#headBytes);
      this.#head.push(take);
      this.#headBytes += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    this.#tail.push(chunk);
    this.#tailBytes += chunk.length;
    while (this.#tailBytes - this.#tail[0]!.length >= this.#half) this.#tailBytes -= this.#tail.shift()!.length;
  }

  get truncated(): boolean {
    return this.total > this.#headBytes + Math.min(this.#tailBytes, this.#half);
  }

  text(): string {
    // Decoded as one buffer when nothing was dropped: a character may straddle the head and the tail.
    if (!this.truncated) return Buffer.concat([...this.#head, ...this.#tail]).toString('utf8');
    // Cut at character boundaries, so that neither end shows a half character as U+FFFD.
    const fullHead = Buffer.concat(this.#head);
    const head = fullHead.subarray(0, wholeCharsEnd(fullHead));
    const tailBytes = Buffer.concat(this.#tail);
    const tail = tailBytes.subarray(charStart(tailBytes, tailBytes.length - this.#half));
    const omitted = this.total - head.length - tail.length;
    return `${head.toString('utf8')}\n[… ${omitted} bytes of output omitted (${this.total} in all): first and last ${this.#half} bytes kept …]\n${tail.toString('utf8')}`;
  }
}

/** The length of `bytes` without a last character cut short. */
function wholeCharsEnd(bytes: Buffer): number {
  let start = bytes.length - 1;
  while (start > 0 && bytes.length - start < 4 && (bytes[start]! & 0xc0) === 0x80) start--;
  const lead = bytes[start] ?? 0;
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return start + size > bytes.length ? start : bytes.length;
}

/** The first index ≥ i that starts a UTF-8 character. */
function charStart(bytes: Buffer, i: number): number {
  while (i < bytes.length && (bytes[i]! & 0xc0) === 0x80) i++;
  return i;
}
