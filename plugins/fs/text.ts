/**
 * Telling text from binary. A NUL byte or bytes that are not UTF-8 in the first 8 KiB make a file
 * binary: the tools refuse (read, edit) or skip (grep) it rather than feed the model mojibake.
 */
export const SAMPLE_BYTES = 8192;

/** `bytes` is the file's start, or all of it; `partial` says the file goes on past them. */
export function looksBinary(bytes: Uint8Array, partial = false): boolean {
  const sample = bytes.subarray(0, SAMPLE_BYTES);
  if (sample.includes(0)) return true;
  try {
    // `stream: true` leaves a character cut at the sample's end pending instead of failing on it.
    new TextDecoder('utf-8', { fatal: true }).decode(sample, { stream: partial || sample.length < bytes.length });
    return false;
  } catch {
    return true;
  }
}

export function countLines(text: string): number {
  if (text === '') return 0;
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < text.length - 1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** `1 line`, `2 lines`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
