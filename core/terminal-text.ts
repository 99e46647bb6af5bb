/**
 * Text from a model, a plugin or an MCP server on its way to a terminal. A control character can
 * move the cursor, rewrite what was printed or clear the screen (ESC sequences, CR, backspace), and
 * a bidi override or isolate makes text read in another order than its characters run: either can
 * make an approval prompt show one command while the tool receives another. Each such character is
 * shown as `\uXXXX` instead: visible, and still the same string inside JSON.
 */

/**
 * Every control (Cc) but tab and newline, every format character (Cf: the bidi marks, embeddings,
 * overrides and isolates, zero-width spaces and joiners, the soft hyphen, the BOM), and the line
 * and paragraph separators, which some terminals break lines on.
 */
const UNSAFE = /(?![\t\n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => escapeCodePoint(c.codePointAt(0)!));
}

/** `\uXXXX`, or a surrogate pair of them for a code point past the BMP (a Cf tag character): valid JSON either way. */
function escapeCodePoint(code: number): string {
  const unit = (u: number) => `\\u${u.toString(16).padStart(4, '0')}`;
  if (code <= 0xffff) return unit(code);
  const offset = code - 0x10000;
  return unit(0xd800 + (offset >> 10)) + unit(0xdc00 + (offset & 0x3ff));
}
