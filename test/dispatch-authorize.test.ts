import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApprovalRequest } from '../core/dispatch.ts';
import { createHost, type Host } from '../core/index.ts';
import { MAX_AUTHORIZE_PER_CALL } from '../core/runners/runner.ts';
import { FIXTURES, tempDir, until } from './helpers.ts';

const PLUGIN = join(FIXTURES, 'plugins', 'authorize.ts');

for (const isolation of ['inline', 'worker', 'process'] as const) {
  describe(`ctx.authorize (${isolation})`, function () {
    this.timeout(30_000);
    let host: Host;
    let temp: ReturnType<typeof tempDir>;
    const asked: ApprovalRequest[] = [];

    before(async () => {
      temp = tempDir('rh-authorize-');
      host = await createHost({
        cwd: temp.dir,
        audit: join(temp.dir, 'audit.jsonl'),
        logLevel: 'error',
        approve: (request) => {
          asked.push(request);
          return 'always';
        },
        config: {
          builtins: false,
          plugins: [{ module: PLUGIN, isolation }],
          policy: {
            default: 'allow',
            deny: [{ tool: 'step', where: { target: 'no-.*' }, reason: 'not there' }],
            ask: [{ tool: 'step', where: { target: 'ask-.*' } }],
          },
        },
      });
    });
    after(async () => {
      await host.close();
      temp.cleanup();
    });
    beforeEach(() => (asked.length = 0));

    const answers = async (next: unknown[]) => {
      const result = await host.call('step', { target: 'start', next });
      expect(result.isError, result.content).to.equal(false);
      return result.data as { allowed: boolean; message?: string; rule?: string }[];
    };

    it("answers with the policy's decision on the given input, naming the rule of a denial", async () => {
      const [fine, denied] = await answers([{ target: 'fine' }, { target: 'no-way' }]);
      expect(fine).to.deep.equal({ allowed: true });
      expect(denied).to.include({ allowed: false, rule: 'policy.deny[0]' });
      expect(denied!.message).to.include('not there (policy rule policy.deny[0])');
    });

    it("validates the input against the tool's schema first, as for a call", async () => {
      const [wrongType, unknownKey, notData] = await answers([
        { target: 5 },
        { target: 'fine', extra: 1 },
        '<function>',
      ]);
      expect(wrongType).to.include({ allowed: false });
      expect(wrongType!.message)
        .to.match(/Invalid input for tool "step"/)
        .and.include('/target');
      expect(unknownKey).to.include({ allowed: false });
      expect(notData).to.include({ allowed: false });
      expect(asked).to.have.length(0);
    });

    it("puts an ask to the approver, whose 'always' holds for that exact input in the call's session", async () => {
      const result = await host.call(
        'step',
        { target: 'start', next: [{ target: 'ask-me' }, { target: 'ask-me' }, { target: 'ask-other' }] },
        { sessionId: 's1' },
      );
      expect(result.data).to.deep.equal([{ allowed: true }, { allowed: true }, { allowed: true }]);
      expect(asked.map((a) => [a.tool.name, a.input, a.sessionId])).to.deep.equal([
        ['step', '{"target":"ask-me"}', 's1'],
        ['step', '{"target":"ask-other"}', 's1'],
      ]);
    });

    it('writes a decision line for each question, under the call id, marked source: authorize', async () => {
      const callId = `audit-${isolation}`;
      await host.call('step', { target: 'start', next: [{ target: 'fine' }, { target: 'no-way' }] }, { callId });
      await until(() =>
        readFileSync(join(temp.dir, 'audit.jsonl'), 'utf8').includes(`"event":"call","callId":"${callId}"`),
      );
      const lines = readFileSync(join(temp.dir, 'audit.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const decisions = lines.filter((l) => l.callId === callId && l.event === 'decision');
      expect(decisions.map((d) => [d.input, d.decision, d.source])).to.deep.equal([
        ['{"next":[{"target":"fine"},{"target":"no-way"}],"target":"start"}', 'allow', undefined],
        ['{"target":"fine"}', 'allow', 'authorize'],
        ['{"target":"no-way"}', 'deny', 'authorize'],
      ]);
    });

    it('answers a flood of questions from one call with a denial past a per-call budget, writing no audit line for those', async () => {
      const callId = `flood-${isolation}`;
      const result = await host.call('flood', { count: 2000 }, { callId });
      expect(result.isError, result.content).to.equal(false);
      const data = result.data as { allowed: number; last: { allowed: boolean; message?: string } };
      expect(data.allowed).to.equal(MAX_AUTHORIZE_PER_CALL);
      expect(data.last.allowed).to.equal(false);
      expect(data.last.message).to.match(/at most \d+ questions/);
      await until(() =>
        readFileSync(join(temp.dir, 'audit.jsonl'), 'utf8').includes(`"event":"call","callId":"${callId}"`),
      );
      const lines = readFileSync(join(temp.dir, 'audit.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.filter((l) => l.callId === callId && l.source === 'authorize')).to.have.length(
        MAX_AUTHORIZE_PER_CALL,
      );
    });

    // Not inline: an inline plugin shares the host's thread anyway.
    if (isolation !== 'inline')
      it('refuses a question whose input is a DAG of 2^40 values after a bounded copy (the host thread is not frozen)', async () => {
        // It answers at all: a host that copied the whole DAG never would.
        const result = await host.call('ask_dag', { depth: 40 });
        expect(result.isError, result.content).to.equal(false);
        expect(result.data).to.include({ allowed: false });
        expect((result.data as { message: string }).message).to.match(/more than [\d,]+ values/);
      });

    it('allows nothing once the call has been answered (a tool that goes on after its cancellation)', async () => {
      const controller = new AbortController();
      const pending = host.call('late', {}, { signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      expect(await pending).to.include({ code: 'cancelled' });
      const told = await until(async () => JSON.parse((await host.call('late_answer', {})).content) as unknown);
      expect(told).to.deep.equal({ allowed: false, message: 'the call has ended' });
    });
  });
}
