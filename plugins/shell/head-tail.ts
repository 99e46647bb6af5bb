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
    const head = Buffer.concat(this.#head).toString('utf8');
    const tailBytes = Buffer.concat(this.#tail);
    if (!this.truncated) return head + tailBytes.toString('utf8');
    const tail = tailBytes.subarray(tailBytes.length - this.#half);
    const omitted = this.total - this.#headBytes - tail.length;
    return `${head}\n[… ${omitted} bytes of output omitted (${this.total} in all): first and last ${this.#half} bytes kept …]\n${tail.toString('utf8')}`;
  }
}
