/**
 * Markdown for a terminal, rendered line by line as the answer streams: headings, lists, quotes,
 * rules, inline code, bold, italic and links, and fenced code blocks with a small syntax colouring
 * (comments, strings, numbers, keywords) that suits most languages well enough to read. Each line
 * is escaped (terminal-text.ts) before styles are added, so the model's own control characters
 * never reach the terminal. Off a terminal, and with `--json`, the answer is written raw instead.
 */
import { terminalSafe } from '../../terminal-text.ts';
import type { Paint } from './style.ts';

const KEYWORDS = new Set(
  (
    'as async await break case catch class const continue def default defer del do elif else enum export extends ' +
    'false fn for from func function go if impl import in interface is let loop match mod module mut new nil None ' +
    'not null or package pass private protected pub public raise return self static struct super switch this throw ' +
    'true True False try type typeof undefined use var void while with yield local then fi done esac echo'
  ).split(' '),
);
const HASH_COMMENTS = new Set([
  'sh',
  'bash',
  'zsh',
  'shell',
  'console',
  'py',
  'python',
  'rb',
  'ruby',
  'yaml',
  'yml',
  'toml',
  'r',
  'perl',
  'make',
  'makefile',
  'dockerfile',
]);
const TOKEN =
  /(\/\/.*$|--\s.*$)|(#.*$)|("(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|`(?:[^`\\]|\\.)*`?)|\b(\d+(?:\.\d+)?)\b|([A-Za-z_][A-Za-z0-9_]*)/g;

/** One line of code in `lang`, coloured. */
function highlight(line: string, lang: string, paint: Paint): string {
  const hash = HASH_COMMENTS.has(lang.toLowerCase());
  return line.replace(TOKEN, (all, slashComment, hashComment, string, number, word) => {
    if (slashComment) return hash ? all : paint(all, 'dim');
    if (hashComment) return hash ? paint(all, 'dim') : all;
    if (string) return paint(all, 'green');
    if (number) return paint(all, 'yellow');
    if (word && KEYWORDS.has(word)) return paint(all, 'magenta');
    return all;
  });
}

/**
 * Inline markdown: code spans first (nothing inside them is markup), then links, bold, italic. A
 * link's label and URL hold no bracket: scanned up to the next one, each '[' is tried in the text
 * up to the next '[' (with `[^\]]+` each scanned to the end of the line, a line of them was quadratic).
 */
export function inline(text: string, paint: Paint): string {
  return text
    .split(/(`[^`]+`)/)
    .map((part, i) => {
      if (i % 2) return paint(part.slice(1, -1), 'cyan');
      return part
        .replace(
          /\[([^[\]]+)\]\(([^)[\]\s]+)\)/g,
          (_, label: string, url: string) => `${paint(label, 'underline')} (${url})`,
        )
        .replace(/\*\*(?=\S)(.+?)\*\*|__(?=\S)(.+?)__/g, (_, a?: string, b?: string) => paint(a ?? b ?? '', 'bold'))
        .replace(
          /(^|[^*\w])\*(?=\S)([^*]+?)\*(?!\w)|(^|[^_\w])_(?=\S)([^_]+?)_(?!\w)/g,
          (_, p1, a, p2, b) => `${p1 ?? p2 ?? ''}${paint(a ?? b ?? '', 'italic')}`,
        );
    })
    .join('');
}

/** Renders markdown pushed in pieces; `write` receives whole rendered lines. */
export class MarkdownStream {
  private partial = '';
  private fence: { marker: string; lang: string } | undefined;
  private readonly paint: Paint;
  private readonly write: (text: string) => void;
  constructor(paint: Paint, write: (text: string) => void) {
    this.paint = paint;
    this.write = write;
  }

  push(text: string): void {
    // Only the new piece is searched for a line end: searching the line so far each time made a
    // long line streamed in small pieces quadratic (200 KB in one-character pieces: 49 s).
    let from = 0;
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', from)) {
      this.write(`${this.line(this.partial + text.slice(from, end))}\n`);
      this.partial = '';
      from = end + 1;
    }
    this.partial += text.slice(from);
  }

  /** The end of the text: its last line, and a fresh state for the next. */
  end(): void {
    if (this.partial) this.write(`${this.line(this.partial)}\n`);
    this.partial = '';
    this.fence = undefined;
  }

  private line(raw: string): string {
    const text = terminalSafe(raw);
    const { paint } = this;
    const fence = /^\s*(`{3,}|~{3,})\s*([\w+#.-]*)/.exec(text);
    if (this.fence) {
      if (fence && fence[1]!.startsWith(this.fence.marker) && !fence[2]) {
        this.fence = undefined;
        return paint(text, 'dim');
      }
      return highlight(text, this.fence.lang, paint);
    }
    if (fence) {
      this.fence = { marker: fence[1]!, lang: fence[2] ?? '' };
      return paint(text, 'dim');
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(text);
    if (heading)
      return paint(inline(heading[2]!, paint), 'bold', ...(heading[1] === '#' ? (['underline'] as const) : []));
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(text)) return paint('─'.repeat(40), 'dim');
    const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(text);
    if (bullet) return `${bullet[1]}${paint('•', 'cyan')} ${inline(bullet[2]!, paint)}`;
    const numbered = /^(\s*)(\d+[.)])\s+(.*)$/.exec(text);
    if (numbered) return `${numbered[1]}${paint(numbered[2]!, 'cyan')} ${inline(numbered[3]!, paint)}`;
    const quote = /^\s*>\s?(.*)$/.exec(text);
    if (quote) return `${paint('│', 'dim')} ${paint(inline(quote[1]!, paint), 'italic')}`;
    return inline(text, paint);
  }
}
