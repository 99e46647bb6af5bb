// `ask` answered by a person: the embedding API's approve callback, the terminal prompt (real
// readline on real streams), and the headless CLI.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promptApprover } from '../core/cli/approve-prompt.ts';
import type { ApprovalRequest, ApproveFn } from '../core/dispatch.ts';
import { createHost, type Host } from '../core/host.ts';
import { FIXTURES, runCli, tempDir } from './helpers.ts';

const KIT = join(FIXTURES, 'policy', 'tools.ts');

function hostAsking(approve?: ApproveFn): Promise<Host> {
  return createHost({
    cwd: FIXTURES,
    audit: false,
    logLevel: 'error',
    ...(approve ? { approve } : {}),
    config: {
      builtins: false,
      plugins: [{ module: KIT, isolation: 'inline' }],
      policy: { default: 'ask', ask: [{ tool: 'shell_*', reason: 'runs commands' }] },
    },
  });
}

describe('policy: approval', () => {
  it('"always" allows that exact input for the session, and never widens to another input, tool or session', async () => {
    const asked: ApprovalRequest[] = [];
    const host = await hostAsking((request) => (asked.push(request), 'always'));
    try {
      const ls = await host.call('shell_run', '{"command":"ls"}', { sessionId: 's1' });
      expect(ls).to.include({ isError: false, content: 'ran: ls' });
      expect(asked).to.have.length(1);
      expect(asked[0]).to.deep.include({ input: '{"command":"ls"}' });
      expect(asked[0]!.decision.rule?.id).to.equal('policy.ask[0]');

      // The same input, however written, runs without asking again.
      await host.call('shell_run', '{ "command" : "\\u006cs" }', { sessionId: 's1' });
      expect(asked).to.have.length(1);
      const granted = host.decide('shell_run', '{"command":"ls"}', { sessionId: 's1' });
      expect(granted).to.include({ ok: true, decision: 'allow' });

      // Anything else is asked again.
      await host.call('shell_run', '{"command":"ls -la"}', { sessionId: 's1' });
      await host.call('shell_run', '{"command":"ls; rm -rf x"}', { sessionId: 's1' });
      await host.call('shell_runner', '{"command":"ls"}', { sessionId: 's1' });
      await host.call('shell_run', '{"command":"ls"}', { sessionId: 's2' });
      await host.call('shell_run', '{"command":"ls"}');
      expect(asked.map((a) => `${a.tool.name} ${a.input} ${a.sessionId ?? '-'}`)).to.deep.equal([
        'shell_run {"command":"ls"} s1',
        'shell_run {"command":"ls -la"} s1',
        'shell_run {"command":"ls; rm -rf x"} s1',
        'shell_runner {"command":"ls"} s1',
        'shell_run {"command":"ls"} s2',
        'shell_run {"command":"ls"} -',
      ]);
    } finally {
      await host.close();
    }
  });

  it('yes approves once; no, or an approver that throws, is a denial the model can read', async () => {
    const answers: (boolean | Error)[] = [true, false, new Error('terminal gone')];
    const host = await hostAsking(() => {
      const next = answers.shift()!;
      if (next instanceof Error) throw next;
      return next;
    });
    try {
      expect(await host.call('shell_run', '{"command":"ls"}')).to.include({ isError: false, content: 'ran: ls' });
      const no = await host.call('shell_run', '{"command":"ls"}');
      expect(no).to.include({ isError: true, code: 'denied' });
      expect(no.content).to.include('denied by the user');
      expect(await host.call('shell_run', '{"command":"ls"}')).to.include({ isError: true, code: 'denied' });
    } finally {
      await host.close();
    }
  });

  it('headless: with no approver, ask is a denial naming the reason and the rule', async () => {
    const host = await hostAsking();
    try {
      const r = await host.call('shell_run', '{"command":"ls"}');
      expect(r).to.include({ isError: true, code: 'denied' });
      expect(r.content).to.include('needs approval: runs commands (policy rule policy.ask[0])').and.include('--yes');
    } finally {
      await host.close();
    }
  });

  it("durationMs leaves out the approver's wait; the audit trail records that wait as approvalMs", async () => {
    const temp = tempDir('rh-approval-wait-');
    const audit = join(temp.dir, 'audit.jsonl');
    const host = await createHost({
      cwd: FIXTURES,
      audit,
      logLevel: 'error',
      approve: () => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 300)),
      config: {
        builtins: false,
        plugins: [{ module: KIT, isolation: 'inline' }],
        policy: { default: 'ask', allow: [{ tool: 'shell_runner' }] },
      },
    });
    try {
      const t0 = performance.now();
      const asked = await host.call('shell_run', '{"command":"ls"}', { callId: 'asked' });
      const elapsed = performance.now() - t0;
      const allowed = await host.call('shell_runner', '{"command":"ls"}', { callId: 'allowed' });
      await host.close();
      expect(asked).to.include({ isError: false, content: 'ran: ls' });
      const lines = readFileSync(audit, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const line = (callId: string, event: string) => lines.find((l) => l.callId === callId && l.event === event)!;
      const waited = line('asked', 'decision').approvalMs as number;
      expect(waited).to.be.at.least(290); // the timer's 300 ms, give or take the clock's rounding
      expect(asked.durationMs).to.be.at.most(elapsed - waited + 1);
      expect(line('asked', 'call')).to.include({ durationMs: asked.durationMs, approvalMs: waited });
      // No one was asked: no wait to record.
      expect(line('allowed', 'decision')).to.not.have.property('approvalMs');
      expect(line('allowed', 'call')).to.not.have.property('approvalMs');
      expect(allowed.isError).to.equal(false);
    } finally {
      await host.close();
      temp.cleanup();
    }
  });

  it('headless CLI: `call` with piped stdin denies an ask (exit 1); --yes approves it', async () => {
    const dir = tempDir();
    try {
      dir.write(
        'rousseau.config.mjs',
        `export default { builtins: false, plugins: [{ module: ${JSON.stringify(KIT)}, isolation: 'inline' }], policy: { ask: [{ tool: 'shell_run' }] }, log: { audit: false } };\n`,
      );
      const denied = await runCli(['call', 'shell_run', '{"command":"ls"}', '--json'], { cwd: dir.dir });
      expect(denied.code).to.equal(1);
      expect(JSON.parse(denied.stdout)).to.include({ isError: true, code: 'denied' });
      const approved = await runCli(['call', 'shell_run', '{"command":"ls"}', '--json', '--yes'], { cwd: dir.dir });
      expect(approved.code).to.equal(0);
      expect(JSON.parse(approved.stdout)).to.include({ isError: false, content: 'ran: ls' });
    } finally {
      dir.cleanup();
    }
  });

  describe('the terminal prompt', () => {
    const request = (command: string): ApprovalRequest => ({
      tool: { name: 'shell_run', description: '', inputSchema: {}, plugin: 'policy-kit' },
      input: JSON.stringify({ command }),
      decision: {
        decision: 'ask',
        rule: { id: 'policy.ask[0]', list: 'ask', tool: 'shell_*', reason: 'runs commands' },
        reason: 'runs commands',
      },
      callId: 'c1',
    });

    it('shows the tool, the rule and the canonical input, and reads yes / no / always', async () => {
      const input = new PassThrough();
      const output = new PassThrough();
      let shown = '';
      output.on('data', (d: Buffer) => (shown += d.toString()));
      const approve = promptApprover(input, output);
      const answers = ['y', 'no', 'A', 'maybe', ''];
      const results = [];
      for (const answer of answers) {
        const pending = approve(request(`echo ${answer}`));
        input.write(`${answer}\n`);
        results.push(await pending);
      }
      expect(results).to.deep.equal([true, false, 'always', false, false]);
      expect(shown).to.include('shell_run (plugin policy-kit) needs approval: rule policy.ask[0], runs commands.');
      expect(shown).to.include('input: {"command":"echo y"}');
      expect(shown).to.include('[a]lways for this exact input in this session');
    });

    it('asks concurrent requests one after another', async () => {
      const input = new PassThrough();
      const output = new PassThrough();
      let shown = '';
      output.on('data', (d: Buffer) => (shown += d.toString()));
      const approve = promptApprover(input, output);
      const first = approve(request('first'));
      const second = approve(request('second'));
      await new Promise((resolve) => setImmediate(resolve));
      expect(shown).to.include('first').and.not.include('second');
      input.write('y\n');
      expect(await first).to.equal(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(shown).to.include('second');
      input.write('n\n');
      expect(await second).to.equal(false);
    });
  });
});
