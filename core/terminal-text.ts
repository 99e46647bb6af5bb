/**
 * Text from a model, a plugin or an MCP server on its way to a terminal. A control character can
 * move the cursor, rewrite what was printed or clear the screen (ESC sequences, CR, backspace), and
 * a bidi override or isolate makes text read in another order than its characters run: either can
 * make an approval prompt show one command while the tool receives another. Each such character is
 * shown as `\uXXXX` instead: visible, and still the same string inside JSON.
 */
import { thousands } from './thousands.ts';

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

/**
 * A run of 32 or more of one character, or of one `\uXXXX` that `terminalSafe` wrote: white space,
 * the characters that print as nothing (zero-width ones, the Hangul fillers, the braille blank) and
 * any other, with no list to miss one. Code's indentation stays shown as it is.
 */
const RUN = /(\\u[0-9a-f]{4}|[^\\])\1{31,}/gu;
/** An input shown for approval longer than this is shown by its start and its end. */
const SHOWN_CHARS = 2_000;
const SHOWN_HEAD = 1_200;

/**
 * An input as a person asked to approve it is shown it, on a terminal or in an MCP client's form:
 * what they read last before answering must hold the start of it, or padding pushes `rm -rf` off
 * the screen and leaves a harmless tail beside the question. Escaped as `terminalSafe` does; then
 * each run of 32 or more of one character shown as its count (`⟨100,000 × U+0020⟩`); then, past
 * 2,000 characters, the first 1,200 and the last 800 around the count of those left out. Escaping
 * comes first so that what is shown is bounded as it prints.
 */
export function approvalText(input: string): string {
  let text = terminalSafe(input).replace(RUN, (run, unit: string) => {
    const code = unit.length === 6 ? Number.parseInt(unit.slice(2), 16) : unit.codePointAt(0)!;
    return `⟨${thousands(run.length / unit.length)} × U+${code.toString(16).toUpperCase().padStart(4, '0')}⟩`;
  });
  if (text.length > SHOWN_CHARS)
    text = `${text.slice(0, SHOWN_HEAD)} ⟨${thousands(text.length - SHOWN_CHARS)} characters not shown⟩ ${text.slice(SHOWN_HEAD - SHOWN_CHARS)}`;
  return text;
}
