/**
 * Text from a model, a plugin or an MCP server on its way to a terminal. A control character can
 * move the cursor, rewrite what was printed or clear the screen (ESC sequences, CR, backspace), and
 * a bidi override or isolate makes text read in another order than its characters run: either can
 * make an approval prompt show one command while the tool receives another. Each such character is
 * shown as `\uXXXX` instead: visible, and still the same string inside JSON.
 */

/** C0 controls but tab and newline, DEL, C1 controls, and the bidi marks, embeddings, overrides and isolates. */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
