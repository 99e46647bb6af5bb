/**
 * Glob patterns as regular expressions over `/`-separated relative paths: `*` and `?` stay within
 * one path segment, `**` spans any number of them, `{a,b}` is an alternative (nested braces too),
 * `[abc]`, `[a-z]` and `[!abc]` (or `[^abc]`) are character classes, and `\` makes the next
 * character literal. Everything else is literal.
 *
 * The model writes the pattern and it runs on the host thread, so it compiles for V8's linear
 * engine (core/linear-regex.ts), which takes no `u` flag: `?` and negated classes are spelled to
 * take a whole surrogate pair, so they still match one character outside the BMP (an emoji).
 * picomatch was considered: its regexes lean on lookaheads, which no linear engine runs.
 */
import { linearRegExp } from '../../core/linear-regex.ts';
import { FsToolError } from './errors.ts';

/** One character outside the BMP, as its two UTF-16 units. */
const ASTRAL = '[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]';
const SLASH = 0x2f;

export function globToRegExp(glob: string): RegExp {
  return linearRegExp(`^${translate(glob, 0, false).out}$`);
}

/** From `start` to the end, or (`inBrace`) to the `,` or `}` that ends one alternative. */
function translate(glob: string, start: number, inBrace: boolean): { out: string; end: number } {
  let out = '';
  let i = start;
  for (; i < glob.length; i++) {
    const c = glob[i]!;
    if (inBrace && (c === ',' || c === '}')) break;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const slash = glob[i + 2] === '/';
        i += slash ? 2 : 1;
        out += slash ? '(?:[^/]*/)*' : '[^]*';
      } else {
        out += '[^/]*';
      }
    } else if (c === '?') {
      out += `(?:${ASTRAL}|[^/])`;
    } else if (c === '{') {
      const alternatives: string[] = [];
      let at = i;
      do {
        const part = translate(glob, at + 1, true);
        alternatives.push(part.out);
        at = part.end;
      } while (glob[at] === ',');
      if (at >= glob.length) throw new FsToolError('invalid_pattern', `glob "${glob}" has a "{" without its "}"`);
      out += `(?:${alternatives.join('|')})`;
      i = at;
    } else if (c === '[') {
      const cls = characterClass(glob, i);
      out += cls.out;
      i = cls.end;
    } else if (c === '\\' && i + 1 < glob.length) {
      out += literal(glob[++i]!);
    } else {
      out += literal(c);
    }
  }
  return { out, end: i };
}

/** `[…]` starting at `start`: a `]` right after `[` or `[!` is a member; a class never matches `/`. */
function characterClass(glob: string, start: number): { out: string; end: number } {
  let i = start + 1;
  const negated = glob[i] === '!' || glob[i] === '^';
  if (negated) i++;
  const ranges: [number, number][] = [];
  const member = () => {
    const c = glob[i] === '\\' && i + 1 < glob.length ? glob[++i]! : glob[i]!;
    if (/[\uD800-\uDFFF]/.test(c)) {
      throw new FsToolError(
        'invalid_pattern',
        `glob "${glob}" has a character outside the BMP inside [...]; write it outside the brackets or use ?`,
      );
    }
    return c.charCodeAt(0);
  };
  for (let first = true; i < glob.length && (first || glob[i] !== ']'); i++, first = false) {
    const low = member();
    if (glob[i + 1] === '-' && i + 2 < glob.length && glob[i + 2] !== ']') {
      i += 2;
      const high = member();
      if (high < low) throw new FsToolError('invalid_pattern', `glob "${glob}" has a range out of order inside [...]`);
      ranges.push([low, high]);
    } else {
      ranges.push([low, low]);
    }
  }
  if (i >= glob.length) throw new FsToolError('invalid_pattern', `glob "${glob}" has a "[" without its "]"`);
  const unit = (code: number) => `\\u${code.toString(16).padStart(4, '0')}`;
  // A positive class loses `/` (a range over it is split round it); a negated one gains it.
  const body = ranges
    .flatMap(([lo, hi]): [number, number][] =>
      negated || lo > SLASH || hi < SLASH
        ? [[lo, hi]]
        : [
            [lo, SLASH - 1],
            [SLASH + 1, hi],
          ],
    )
    .filter(([lo, hi]) => lo <= hi)
    .map(([lo, hi]) => (lo === hi ? unit(lo) : `${unit(lo)}-${unit(hi)}`))
    .join('');
  if (negated) return { out: `(?:${ASTRAL}|[^${body}/])`, end: i };
  // Only `/` was listed: a class that matches nothing.
  return { out: body ? `[${body}]` : '[]', end: i };
}

function literal(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/, '\\$&');
}
