// The REPL as a person sees it: the built CLI on a real pseudo-terminal (terminal.ts), its screen
// read back. Each test writes a config naming the terminal fixture plugin and a replay script in a
// temp directory (shared.ts). How a turn shows: progress, approval prompts, markdown. The commands,
// Ctrl-C at the prompt and saved sessions are repl-commands.test.ts: two files, run side by side.
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { until } from '../helpers.ts';
import { NO_KEYS, replayWorkspace as workspace } from './shared.ts';
import { openTerminal, type Terminal } from './terminal.ts';

/** Colour as a terminal would have it: the test runner's own NO_COLOR / FORCE_COLOR do not leak in. */
const COLOUR = { NO_COLOR: '', FORCE_COLOR: '' };
const SGR = /\u001b\[[0-9;]*m/;
const MARKDOWN = '# Plan\n\nThe **key** step:\n\n- one `x`\n- two\n\n```js\nconst n = 42; // why\n```\n';

/** Asks for the MARKDOWN answer at the prompt and checks how it shows, coloured or not. */
async function expectMarkdown(term: Terminal, colour: boolean): Promise<void> {
  term.type('plan');
  term.press('Enter');
  await term.waitFor(/const n = 42/);
  const screen = term.screen();
  expect(screen).to.contain('The key step:').and.contain('• one x').and.contain('• two');
  expect(screen).not.to.contain('**key**');
  expect(screen).to.match(/^Plan$/m);
  if (!colour) expect(term.raw()).not.to.match(SGR);
  else {
    expect(term.raw()).to.contain('\u001b[1mkey\u001b[22m');
    expect(term.raw()).to.contain('\u001b[33m42\u001b[39m'); // a number in the code block
    expect(term.raw()).to.contain('\u001b[35mconst\u001b[39m'); // a keyword
  }
}

describe('rousseau-host start on a terminal (REPL)', function () {
  this.timeout(40_000);
  let term: Terminal | undefined;
  afterEach(() => term?.close());

  // The answer without colour is checked in this session, itself under NO_COLOR: a terminal of its
  // own is a CLI process (~0.4 s of CPU).
  it('shows a slow call as one line updated in place: a progress bar while it runs, then its result; renders the answer as markdown without colour under NO_COLOR', async () => {
    const { tmp, script } = workspace([
      { text: 'Counting.', toolCalls: [{ name: 'slow', input: { ms: 400 } }] },
      { text: 'Counted.' },
      { text: MARKDOWN },
    ]);
    try {
      term = openTerminal(['start', '--replay', script], { cwd: tmp.dir, env: { ...NO_KEYS, NO_COLOR: '1' } });
      await term.waitFor(/you> /);
      term.type('count');
      term.press('Enter');
      await term.waitFor(/⠋|⠙|⠹|⠸|⠼|⠴|⠦|⠧|⠇|⠏/);
      await term.waitFor(/slow \{"ms":400\} {2}\d+\.\ds {2}\[█+░*\] \d+\/10 step \d+/);
      await term.waitFor(/Counted\./);
      const screen = term.screen();
      expect(screen).to.match(/✓ slow \{"ms":400\} {2}\d+ ms {2}counted to 10/);
      expect(screen.match(/slow \{"ms":400\}/g), screen).to.have.length(1);
      expect(screen).to.contain('[end_turn: 2 turn(s), 1 tool call(s)]');
      await term.waitFor(/you> /, 2);
      await expectMarkdown(term, false);
      term.press('C-d');
      expect(await term.exited()).to.equal(0);
    } finally {
      tmp.cleanup();
    }
  });

  it('holds a concurrent result while an approval prompt is open, escapes its input and names the rule', async () => {
    const { tmp, script } = workspace(
      [
        {
          toolCalls: [
            { name: 'quick', input: { ms: 300, flag: 'quick.flag' } },
            { name: 'guarded', input: { what: 'secret \u202eexe.txt' } },
          ],
        },
        { text: 'Both done.' },
      ],
      { default: 'allow', ask: [{ tool: 'guarded', match: 'secret', reason: 'it reads secrets' }] },
    );
    try {
      term = openTerminal(['start', '--replay', script], { cwd: tmp.dir, env: { ...NO_KEYS, NO_COLOR: '1' } });
      await term.waitFor(/you> /);
      term.type('go');
      term.press('Enter');
      await term.waitFor(/\[y\]es \/ \[n\]o \/ \[a\]lways/);
      // The other call finishes while the question is open: its result must wait.
      await until(() => existsSync(join(tmp.dir, 'quick.flag')), { timeoutMs: 10_000, message: 'quick to finish' });
      await new Promise((resolve) => setTimeout(resolve, 500));
      const open = term.screen();
      expect(open.trimEnd().split('\n').at(-1)).to.match(/\[y\]es \/ \[n\]o \/ \[a\]lways .*session:$/);
      expect(open).not.to.contain('quick done');
      expect(open).to.contain('guarded (plugin term) needs approval: rule policy.ask[0], it reads secrets.');
      expect(open).to.contain('rule:  tool guarded, match "secret"');
      expect(open).to.contain('input: {"what":"secret \\u202eexe.txt"}');
      term.type('y');
      term.press('Enter');
      await term.waitFor(/Both done\./);
      const after = term.screen();
      expect(after).to.match(/in this session: y\n/);
      expect(after).to.match(/✓ quick .*quick done/);
      expect(after).to.match(/✓ guarded .*guarded ran on secret/);
      expect(after.indexOf('quick done')).to.be.greaterThan(after.indexOf('in this session: y'));
    } finally {
      tmp.cleanup();
    }
  });

  it('takes Ctrl-C at an approval prompt as a no that cancels the turn', async () => {
    const { tmp, script } = workspace(
      [{ toolCalls: [{ name: 'guarded', input: { what: 'secret' } }] }, { text: 'never' }],
      { default: 'allow', ask: [{ tool: 'guarded' }] },
    );
    try {
      term = openTerminal(['start', '--replay', script], { cwd: tmp.dir, env: { ...NO_KEYS, NO_COLOR: '1' } });
      await term.waitFor(/you> /);
      term.type('go');
      term.press('Enter');
      await term.waitFor(/\[y\]es \/ \[n\]o \/ \[a\]lways/);
      term.press('C-c');
      await term.waitFor(/\(cancelling the turn\)/);
      await term.waitFor(/\[aborted: 1 turn\(s\), 1 tool call\(s\)\]/);
      expect(term.screen()).to.match(/✗ guarded .*cancelled: Call to "guarded" was cancelled/);
      await term.waitFor(/you> /, 2);
      term.press('C-d');
      expect(await term.exited()).to.equal(0);
    } finally {
      tmp.cleanup();
    }
  });

  it('renders the answer as markdown in colour on a terminal', async () => {
    const { tmp, script } = workspace([{ text: MARKDOWN }]);
    try {
      term = openTerminal(['start', '--replay', script], { cwd: tmp.dir, env: { ...NO_KEYS, ...COLOUR } });
      await term.waitFor(/you> /);
      await expectMarkdown(term, true);
      term.press('C-d');
      expect(await term.exited()).to.equal(0);
    } finally {
      tmp.cleanup();
    }
  });
});
