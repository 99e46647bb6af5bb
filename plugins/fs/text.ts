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

/** A name read from a directory, as the tools show it. */
export interface ShownName {
  text: string;
  /** The name held bytes that are not UTF-8, or control characters: `text` shows them as `\xNN`. */
  escaped: boolean;
}

/**
 * A file name in bytes, as text the model can read: valid UTF-8 as it is, and each byte that is not
 * part of a valid character, or is a control character (a newline in a name would forge an output
 * row), as `\xNN`. Decoding such a name as UTF-8 would replace its bytes, so the name would no longer
 * open: the tools keep the bytes for the file system and show this.
 */
export function shownName(name: Buffer): ShownName {
  const text = name.toString('utf8');
  if (!/[\u0000-\u001f\u007f\ufffd]/.test(text)) return { text, escaped: false };
  let shown = '';
  for (let i = 0; i < name.length; ) {
    const length = utf8Length(name, i);
    const char = length === 0 ? '' : name.toString('utf8', i, i + length);
    if (length === 0 || /^[\u0000-\u001f\u007f]$/.test(char)) {
      shown += `\\x${name[i]!.toString(16).padStart(2, '0')}`;
      i++;
    } else {
      shown += char;
      i += length;
    }
  }
  return { text: shown, escaped: shown !== text };
}

/** The length of the valid UTF-8 character at `at`, or 0 when the bytes there are not one. */
function utf8Length(bytes: Buffer, at: number): number {
  const lead = bytes[at]!;
  if (lead < 0x80) return 1;
  const length =
    lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
  if (length === 0 || at + length > bytes.length) return 0;
  for (let k = 1; k < length; k++) if ((bytes[at + k]! & 0xc0) !== 0x80) return 0;
  const second = bytes[at + 1]!;
  // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
  if (
    (lead === 0xe0 && second < 0xa0) ||
    (lead === 0xed && second > 0x9f) ||
    (lead === 0xf0 && second < 0x90) ||
    (lead === 0xf4 && second > 0x8f)
  )
    return 0;
  return length;
}

/** How ls, glob and grep show such names: in their descriptions, on the row (`ESCAPED_MARK`), and in a note under the listing. */
export const ESCAPED_DESCRIPTION =
  'A name that is not UTF-8 or holds control characters is shown with those bytes as \\xNN and marked "[escaped]".';
export const ESCAPED_MARK = ' [escaped]';
export const ESCAPED_NOTE =
  '[escaped: a name holds bytes that are not UTF-8, or control characters; they are shown as \\xNN, so the name as shown does not open the file]';
