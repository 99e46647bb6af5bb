/**
 * Text from a model, a plugin or an MCP server on its way to a terminal. A control character can
 * move the cursor, rewrite what was printed or clear the screen (ESC sequences, CR, backspace), and
 * a bidi override or isolate makes text read in another order than its characters run: either can
 * make an approval prompt show one command while the tool receives another. Each such character is
 * shown as `\uXXXX` instead: visible, and still the same string inside JSON.
 */

/**
 * C0 controls but tab and newline, DEL and C1 controls (Cc); every format character (Cf: the bidi
 * marks, embeddings, overrides and isolates, but also zero-width spaces and joiners, the soft
 * hyphen, the BOM and the tag characters U+E0000–E007F, which print as nothing: `ls` followed by a
 * tagged text shows as `ls`); the line and paragraph separators; lone surrogates. A class by
 * Unicode category, not a list, so the invisible characters not named here are covered too. One
 * character class matches in linear time, `u` flag or not.
 */
const UNSAFE = /(?![\t\n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** Each UTF-16 unit as `\uXXXX`: an astral character becomes its surrogate pair, as in JSON. */
const escapeUnits = (c: string) =>
  Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');

export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, escapeUnits);
}
