/**
 * Glob patterns as regular expressions over `/`-separated relative paths: `*` and `?` stay within
 * one path segment, `**` spans any number of them, `{a,b}` is an alternative, `[abc]` and `[!abc]`
 * are character classes. Everything else is literal.
 */
import { FsToolError } from './errors.ts';

export function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${translate(glob)}$`, 'u');
}

function translate(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const slash = glob[i + 2] === '/';
        i += slash ? 2 : 1;
        out += slash ? '(?:[^/]*/)*' : '.*';
      } else {
        out += '[^/]*';
      }
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '{') {
      const end = glob.indexOf('}', i);
      if (end === -1) throw new FsToolError('invalid_pattern', `glob "${glob}" has a "{" without its "}"`);
      out += `(?:${glob.slice(i + 1, end).split(',').map(translate).join('|')})`;
      i = end;
    } else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end === -1) throw new FsToolError('invalid_pattern', `glob "${glob}" has a "[" without its "]"`);
      const body = glob.slice(i + 1, end).replace(/^!/, '^').replace(/[\\\]]/g, '\\$&');
      out += `[${body}]`;
      i = end;
    } else {
      out += c.replace(/[.+^$()|\\\]}]/gu, '\\$&');
    }
  }
  return out;
}
