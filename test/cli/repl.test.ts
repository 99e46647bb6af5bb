// The REPL as a person sees it: the built CLI on a real pseudo-terminal (terminal.ts), its screen
// read back. Each test writes a config naming the terminal fixture plugin and a replay script (or
// runs a fake model server) in a temp directory.
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ANTHROPIC_TEST_KEY, startAnthropicServer } from '../fixtures/providers/anthropic-server.ts';
import { FIXTURES, tempDir, until } from '../helpers.ts';
import { openTerminal, type Terminal } from './terminal.ts';

const NO_KEYS = { ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', OPENAI_BASE_URL: '', ANTHROPIC_BASE_URL: '' };
/** Colour as a terminal would have it: the test runner's own NO_COLOR / FORCE_COLOR do not leak in. */
const COLOUR = { NO_COLOR: '', FORCE_COLOR: '' };
const SGR = /\u001b\[[0-9;]*m/;

function workspace(turns: unknown[], policy: object = { default: 'allow' }) {
  const tmp = tempDir();
  tmp.write(
    'rousseau.config.json',
    JSON.stringify({ builtins: false, plugins: [join(FIXTURES, 'plugins', 'term.ts')], policy, log: { audit: false } }),
  );
  const script = tmp.write('script.json', JSON.stringify({ turns }));
  return { tmp, script };
}

describe('rousseau-host start on a terminal (REPL)', function () {
  this.timeout(40_000);
  let term: Terminal | undefined;
  afterEach(() => term?.close());

  it('shows a slow call as one line updated in place: a progress bar while it runs, then its result', async () => {
    const { tmp, script } = workspace([
      { text: 'Counting.', toolCalls: [{ name: 'slow', input: { ms: 400 } }] },
      { text: 'Counted.' },
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

  it('renders the answer as markdown in colour on a terminal, and without colour under NO_COLOR', async () => {
    const answer = '# Plan\n\nThe **key** step:\n\n- one `x`\n- two\n\n```js\nconst n = 42; // why\n```\n';
    for (const noColour of [false, true]) {
      const { tmp, script } = workspace([{ text: answer }]);
      try {
        term = openTerminal(['start', '--replay', script], {
          cwd: tmp.dir,
          env: { ...NO_KEYS, ...COLOUR, ...(noColour ? { NO_COLOR: '1' } : {}) },
        });
        await term.waitFor(/you> /);
        term.type('plan');
        term.press('Enter');
        await term.waitFor(/const n = 42/);
        const screen = term.screen();
        expect(screen).to.contain('The key step:').and.contain('• one x').and.contain('• two');
        expect(screen).not.to.contain('**key**');
        expect(screen).to.match(/^Plan$/m);
        if (noColour) expect(term.raw()).not.to.match(SGR);
        else {
          expect(term.raw()).to.contain('\u001b[1mkey\u001b[22m');
          expect(term.raw()).to.contain('\u001b[33m42\u001b[39m'); // a number in the code block
          expect(term.raw()).to.contain('\u001b[35mconst\u001b[39m'); // a keyword
        }
        term.press('C-d');
        expect(await term.exited()).to.equal(0);
      } finally {
        term?.close();
        tmp.cleanup();
      }
    }
  });

  it("plays a replay script's own prompt as one run on a terminal, showing the answer once", async () => {
    const { tmp } = workspace([]);
    const script = tmp.write(
      'prompted.json',
      JSON.stringify({ prompt: 'Say it', turns: [{ text: 'The one answer.' }] }),
    );
    try {
      term = openTerminal(['start', '--replay', script], { cwd: tmp.dir, env: { ...NO_KEYS, NO_COLOR: '1' } });
      expect(await term.exited()).to.equal(0);
      const screen = term.screen();
      expect(screen).to.contain('you: Say it');
      expect(screen.match(/The one answer\./g), screen).to.have.length(1);
      expect(screen).to.contain('[end_turn: 1 turn(s), 0 tool call(s)');
    } finally {
      tmp.cleanup();
    }
  });

  it('lists the tools with /tools (Tab completes it), reports tokens with /usage and at exit, exits on /exit', async () => {
    const { tmp, script } = workspace([
      { text: 'One.', usage: { inputTokens: 1200, outputTokens: 34, cacheReadTokens: 1000 } },
      { text: 'Two.', usage: { inputTokens: 1300, outputTokens: 6 } },
    ]);
    try {
      term = openTerminal(['start', '--replay', script], { cwd: tmp.dir, env: { ...NO_KEYS, NO_COLOR: '1' } });
      await term.waitFor(/you> /);
      term.type('/too');
      term.press('Tab');
      await term.waitFor(/you> \/tools/);
      term.press('Enter');
      await term.waitFor(/3 tool\(s\):/);
      expect(term.screen()).to.match(/ {2}slow {5}Counts to ten slowly, reporting progress\. \(term\)/);
      expect(term.screen()).to.match(/ {2}guarded {2}Runs only with approval\. \(term\)/);
      term.type('first, with sl');
      term.press('Tab');
      await term.waitFor(/you> first, with slow/);
      term.press('Enter');
      await term.waitFor(/One\./);
      await term.waitFor(/you> /, 3);
      term.type('second');
      term.press('Enter');
      await term.waitFor(/Two\./);
      term.type('/usage');
      term.press('Enter');
      await term.waitFor(/session: 2500 in/);
      const screen = term.screen();
      expect(screen).to.contain('prompt 1: 1200 in / 34 out tokens, 1000 cache read');
      expect(screen).to.contain('prompt 2: 1300 in / 6 out tokens');
      expect(screen).to.contain('session: 2500 in / 40 out tokens, 1000 cache read');
      term.type('/exit');
      term.press('Enter');
      expect(await term.exited()).to.equal(0);
      expect(term.screen()).to.match(/Session \S+: 2500 in \/ 40 out tokens, 1000 cache read\./);
      // A line to copy as is: in a project the CLI is not on PATH, npx finds it.
      expect(term.screen()).to.match(/carry on with: npx rousseau-host start --resume \S+/);
      expect(term.raw()).to.match(/\n$/); // the shell's prompt starts on a line of its own
    } finally {
      tmp.cleanup();
    }
  });

  it('shows the exit hint on the first Ctrl-C at the prompt, cancels a running turn with Ctrl-C, exits on the second', async () => {
    const { tmp, script } = workspace([{ toolCalls: [{ name: 'slow', input: { ms: 3000 } }] }, { text: 'never' }]);
    try {
      term = openTerminal(['start', '--replay', script], { cwd: tmp.dir, env: { ...NO_KEYS, NO_COLOR: '1' } });
      await term.waitFor(/you> /);
      term.type('wait');
      term.press('Enter');
      await term.waitFor(/slow \{"ms":3000\}/);
      term.press('C-c');
      await term.waitFor(/✗ slow \{"ms":3000\} .*cancelled/);
      await term.waitFor(/\[aborted: 1 turn\(s\), 1 tool call\(s\)\]/);
      await term.waitFor(/you> /, 2);
      term.press('C-c');
      await term.waitFor(/\(press Ctrl-C again to exit\)/);
      term.press('C-c');
      expect(await term.exited()).to.equal(0);
    } finally {
      tmp.cleanup();
    }
  });

  it('saves the conversation and resumes it with --continue: the model receives its history', async () => {
    const tmp = tempDir();
    const server = await startAnthropicServer([
      { turn: { text: 'Hello, Ada.' } },
      { turn: { text: 'You are Ada.' } },
      { turn: { text: 'Still Ada.' } },
    ]);
    const env = { ...NO_KEYS, NO_COLOR: '1', ANTHROPIC_API_KEY: ANTHROPIC_TEST_KEY, ANTHROPIC_BASE_URL: server.url };
    try {
      tmp.write('rousseau.config.json', JSON.stringify({ builtins: false, log: { audit: false } }));
      term = openTerminal(['start'], { cwd: tmp.dir, env });
      await term.waitFor(/you> /);
      term.type('I am Ada');
      term.press('Enter');
      await term.waitFor(/Hello, Ada\./);
      term.press('C-d');
      expect(await term.exited()).to.equal(0);
      term.close();

      const dir = join(tmp.dir, '.rousseau', 'sessions');
      const [file] = readdirSync(dir);
      const saved = readFileSync(join(dir, file!), 'utf8');
      expect(saved).not.to.contain(ANTHROPIC_TEST_KEY);
      const records = saved
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(records.map((r) => r.type)).to.deep.equal(['session', 'message', 'message', 'usage']);
      for (const r of records) expect(Date.parse(r.ts)).to.be.a('number').and.not.NaN;

      term = openTerminal(['start', '--continue'], { cwd: tmp.dir, env });
      await term.waitFor(/Resumed session \S+: 2 message\(s\); last you said: I am Ada/);
      await term.waitFor(/you> /);
      term.type('Who am I?');
      term.press('Enter');
      await term.waitFor(/You are Ada\./);
      expect(server.violations).to.deep.equal([]);
      expect(server.requests[1]!.body.messages).to.deep.equal([
        { role: 'user', content: [{ type: 'text', text: 'I am Ada' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Hello, Ada.' }] },
        // The last block carries the prompt-cache mark (docs/agent.md, prompt caching).
        { role: 'user', content: [{ type: 'text', text: 'Who am I?', cache_control: { type: 'ephemeral' } }] },
      ]);
      const id = file!.replace('.jsonl', '');
      term.type('/sessions');
      term.press('Enter');
      await term.waitFor(new RegExp(`\\* ${id} .* 4 msg {2}I am Ada`));

      // Another model carries the same conversation on; /clear starts afresh; /resume goes back.
      term.type('/model claude-other');
      term.press('Enter');
      await term.waitFor(/Model: anthropic \(claude-other\)\./);
      term.type('And now?');
      term.press('Enter');
      await term.waitFor(/Still Ada\./);
      expect(server.requests[2]!.body.model).to.equal('claude-other');
      expect(server.requests[2]!.body.messages).to.have.length(5);
      term.type('/clear');
      term.press('Enter');
      await term.waitFor(/New conversation \(session \S+\)\./);
      term.type('/resume 20');
      term.press('Tab');
      await term.waitFor(new RegExp(`you> /resume ${id}`));
      term.press('Enter');
      await term.waitFor(/Resumed session \S+: 6 message\(s\); last you said: And now\?/, 1);
    } finally {
      await server.close();
      tmp.cleanup();
    }
  });
});
