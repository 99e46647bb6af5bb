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
});
