// The REPL's commands as a person uses them on a terminal (terminal.ts): /tools with Tab completion,
// /usage, /exit, Ctrl-C at the prompt, and a saved conversation resumed with --continue (against a
// fake model server). Beside repl.test.ts (how a turn shows), in a file of its own so the two run
// side by side.
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ANTHROPIC_TEST_KEY, startAnthropicServer } from '../fixtures/providers/anthropic-server.ts';
import { tempDir } from '../helpers.ts';
import { NO_KEYS, replayWorkspace as workspace } from './shared.ts';
import { openTerminal, type Terminal } from './terminal.ts';

describe('rousseau-host start on a terminal (REPL): commands, Ctrl-C, sessions', function () {
  this.timeout(40_000);
  let term: Terminal | undefined;
  afterEach(() => term?.close());

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
