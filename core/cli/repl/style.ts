/**
 * How the CLI styles what it shows people: whether a stream gets colour, the few SGR styles it
 * uses, and fitting a line to the terminal's width. Colour follows the common conventions:
 * `FORCE_COLOR` (anything but `0` or `false`) turns it on even off a terminal, `NO_COLOR` (any
 * non-empty value) turns it off, otherwise a terminal gets colour unless `TERM=dumb`.
 */

export type StyleName =
  | 'bold'
  | 'dim'
  | 'italic'
  | 'underline'
  | 'red'
  | 'green'
  | 'yellow'
  | 'blue'
  | 'magenta'
  | 'cyan';

const SGR: Record<StyleName, [number, number]> = {
  bold: [1, 22],
  dim: [2, 22],
  italic: [3, 23],
  underline: [4, 24],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  magenta: [35, 39],
  cyan: [36, 39],
};

/** Whether text written to `stream` gets colour, under `env`. */
export function colourFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false';
  if (env.NO_COLOR) return false;
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

/** Applies styles, or nothing when colour is off. */
export type Paint = (text: string, ...styles: StyleName[]) => string;

export function painter(colour: boolean): Paint {
  if (!colour) return (text) => text;
  return (text, ...styles) =>
    text && styles.length
      ? `${styles.map((s) => `\u001b[${SGR[s][0]}m`).join('')}${text}${styles
          .map((s) => `\u001b[${SGR[s][1]}m`)
          .reverse()
          .join('')}`
      : text;
}

/** One line of at most `max` characters: newlines shown as ⏎, tabs as a space (a tab's width is the terminal's), the rest cut with …. */
export function clip(text: string, max: number): string {
  const line = text.replace(/\s*\n\s*/g, ' ⏎ ').replace(/\t/g, ' ');
  if (max <= 0) return '';
  const chars = Array.from(line);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : line;
}
