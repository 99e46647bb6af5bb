import { expect } from 'chai';
import { MarkdownStream } from '../../../core/cli/repl/markdown.ts';
import { painter } from '../../../core/cli/repl/style.ts';

/** Renders `pieces` pushed one after another, as a stream delivers them. */
function render(pieces: string[], colour: boolean): string {
  let out = '';
  const md = new MarkdownStream(painter(colour), (text) => (out += text));
  for (const piece of pieces) md.push(piece);
  md.end();
  return out;
}

describe('markdown on a terminal', () => {
  it('renders headings, lists, quotes, links and inline styles, whole lines at a time however the text is cut', () => {
    const text = '## Steps\n1. run `npm ci`\n- **bold** and *it*\n> quoted\nsee [docs](https://x.dev/a)';
    const pieces = text.match(/.{1,3}/gs) ?? [];
    expect(render(pieces, false)).to.equal(
      'Steps\n1. run npm ci\n• bold and it\n│ quoted\nsee docs (https://x.dev/a)\n',
    );
    const coloured = render([text], true);
    expect(coloured).to.contain('\u001b[1mSteps\u001b[22m');
    expect(coloured).to.contain('\u001b[36mnpm ci\u001b[39m');
    expect(coloured).to.contain('\u001b[1mbold\u001b[22m and \u001b[3mit\u001b[23m');
  });

  it('colours code blocks by token and leaves markup inside them alone', () => {
    const out = render(['```ts\nconst s = "**not bold**"; // note\n```\n'], true);
    expect(out).to.contain('\u001b[35mconst\u001b[39m');
    expect(out).to.contain('\u001b[32m"**not bold**"\u001b[39m');
    expect(out).to.contain('\u001b[2m// note\u001b[22m');
    expect(render(['```sh\necho hi # greet\n```\n'], true)).to.contain('\u001b[2m# greet\u001b[22m');
  });

  it("escapes the model's own control and bidi characters before adding styles", () => {
    const out = render(['**a\u001b[2Jb** \u202eevil\n'], true);
    expect(out).to.contain('a\\u001b[2Jb').and.contain('\\u202eevil');
    expect(out.replace(/\u001b\[\d+m/g, '')).not.to.contain('\u001b');
  });

  // A model's line is rendered on the host's thread, the thread every call and the REPL share. Each
  // piece once searched the whole line so far for its end (a 200 KB line in one-character pieces:
  // 49 s), and the link pattern scanned to the end of the line from each '[' (a million: ~17 min).
  // Both would still be running when the test times out.
  it('renders a line of a million characters streamed one character at a time', () => {
    const line = 'word '.repeat(200_000);
    const out = render(line.split(''), false);
    expect(out).to.equal(`${line}\n`);
  });

  it('renders lines of brackets that open links never closed, a million characters each', () => {
    for (const line of ['['.repeat(1_000_000), '[a]('.repeat(250_000), '[a](b'.repeat(200_000)]) {
      expect(render([line, '\n'], false)).to.equal(`${line}\n`);
    }
    expect(render(['see [a [docs](https://x.dev/a) and [b](c)\n'], false)).to.equal(
      'see [a docs (https://x.dev/a) and b (c)\n',
    );
  });
});
