/**
 * Caps what a tool returns before it reaches the model. Both ends are kept: the head says what the
 * output is, the tail holds the error or the summary that long outputs end with.
 */

/** The default cap on a tool's output: 64 KiB, about 16k tokens. Configurable per plugin (`maxOutputBytes`). */
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;

export interface Capped {
  text: string;
  truncated: boolean;
}

/** Keeps at most `maxBytes` UTF-8 bytes of `text`: half from the head, half from the tail, a marker between. */
export function capOutput(text: string, maxBytes: number): Capped {
  if (text.length * 3 <= maxBytes) return { text, truncated: false }; // cannot be over: skip counting
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  const half = Math.floor(maxBytes / 2);
  const head = bytes.subarray(0, backToBoundary(bytes, half));
  const tailStart = forwardToBoundary(bytes, bytes.length - half);
  const tail = bytes.subarray(tailStart);
  const omitted = bytes.length - head.length - tail.length;
  const marker = `\n\n[… ${omitted} bytes omitted of ${bytes.length}: output capped at ${maxBytes} bytes, head and tail kept …]\n\n`;
  return { text: head.toString('utf8') + marker + tail.toString('utf8'), truncated: true };
}

/** The largest index ≤ i that starts a UTF-8 character. */
function backToBoundary(bytes: Buffer, i: number): number {
  while (i > 0 && (bytes[i]! & 0xc0) === 0x80) i--;
  return i;
}

/** The smallest index ≥ i that starts a UTF-8 character. */
function forwardToBoundary(bytes: Buffer, i: number): number {
  while (i < bytes.length && (bytes[i]! & 0xc0) === 0x80) i++;
  return i;
}
