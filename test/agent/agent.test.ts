import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHost } from '../../core/host.ts';
import { Agent } from '../../core/agent/agent.ts';
import { replayProvider, type ReplayTurn } from '../../core/agent/providers/replay.ts';
import { projectTools } from '../../core/agent/tool-specs.ts';
import type { Host } from '../../core/host.ts';
import { FIXTURES, tempDir } from '../helpers.ts';
import { kitHost, recorder } from './helpers.ts';

describe('Agent', () => {
  let host: Host;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ host, cleanup } = await kitHost()));
  afterEach(() => cleanup());

  const agentFor = (turns: ReplayTurn[], options: { maxTurns?: number; maxRepeatedFailures?: number } = {}) =>
    new Agent({ host, provider: replayProvider({ script: { turns } }), ...options });

  describe('regressions seen in other agent loops', () => {
    it('an unknown tool is an error result, not the end of the turn: the other calls of the turn still run', async () => {
      const agent = agentFor([
        {
          toolCalls: [
            { name: 'greet', input: { who: 'A' } },
            { name: 'missing', input: {} },
            { name: 'greet', input: { who: 'B' } },
          ],
        },
        { text: 'ok' },
      ]);
      const result = await agent.run('go');
      expect(result.stopReason).to.equal('end_turn');
      const results = agent.messages.find((m) => m.role === 'tool')!;
      expect(results.role === 'tool' && results.results.map((r) => r.code ?? r.content)).to.deep.equal([
        'hello A',
        'unknown_tool',
        'hello B',
      ]);
    });

    it('the calls of a turn run concurrently, not one after another', async () => {
      const agent = agentFor([
        {
          toolCalls: [
            { name: 'slow', input: { ms: 500, tag: 'first' } },
            { name: 'slow', input: { ms: 10, tag: 'second' } },
          ],
        },
        { text: 'ok' },
      ]);
      const rec = recorder();
      await agent.run('go', { onEvent: rec.onEvent });
      // issued in call order, finished in the other: the second never waited for the first
      expect(rec.of('tool_call').map((e) => e.call.id)).to.deep.equal(['replay_1_1', 'replay_1_2']);
      expect(rec.of('tool_result').map((e) => e.result.content)).to.deep.equal(['second', 'first']);
      const results = agent.messages.find((m) => m.role === 'tool')!;
      expect(results.role === 'tool' && results.results.map((r) => r.content)).to.deep.equal(['first', 'second']);
    });
  });

  it('turns a denial, a timeout, invalid input and a thrown error into error results the model sees', async () => {
    const agent = agentFor([
      {
        toolCalls: [
          { name: 'fail', input: { message: 'forbidden thing' } },
          { name: 'ignore_signal', input: { ms: 5000 } },
          { name: 'greet', input: { who: 1 } },
          { name: 'fail', input: { message: 'boom' } },
        ],
      },
      { text: 'noted' },
    ]);
    const result = await agent.run('go');
    expect(result.stopReason).to.equal('end_turn');
    const results = agent.messages.find((m) => m.role === 'tool')!;
    expect(results.role === 'tool' && results.results.map((r) => [r.isError, r.code])).to.deep.equal([
      [true, 'denied'],
      [true, 'timeout'],
      [true, 'invalid_input'],
      [true, 'tool_error'],
    ]);
  });

  it("audits the model's call ids only once each: an id the model sends again, or one over 256 characters, gets the host's", async () => {
    // The model chooses its call ids, and the audit ties a call's lines together by them: one id
    // on two calls would make either call's lines read as the other's.
    const tmp = tempDir('rh-agent-ids-');
    const audit = join(tmp.dir, 'audit.jsonl');
    const audited = await createHost({
      cwd: tmp.dir,
      config: { builtins: false, plugins: [{ module: join(FIXTURES, 'plugins', 'kit.ts'), isolation: 'inline' }] },
      audit,
      logLevel: 'error',
    });
    try {
      const long = 'x'.repeat(257);
      const earlier = {
        role: 'assistant' as const,
        text: '',
        toolCalls: [{ id: 'old', name: 'greet', arguments: '{}' }],
      };
      const agent = new Agent({
        host: audited,
        messages: [{ role: 'user', content: 'before' }, earlier],
        provider: replayProvider({
          script: {
            turns: [
              {
                toolCalls: [
                  { id: 'same', name: 'greet', input: { who: 'A' } },
                  { id: 'same', name: 'greet', input: { who: 'B' } },
                  { id: 'old', name: 'greet', input: { who: 'C' } },
                  { id: long, name: 'greet', input: { who: 'D' } },
                ],
              },
              { toolCalls: [{ id: 'same', name: 'greet', input: { who: 'E' } }] },
              { text: 'done' },
            ],
          },
        }),
      });
      await agent.run('go');
      await audited.close();
      const calls = readFileSync(audit, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { event: string; callId: string; input?: string })
        .filter((l) => l.event === 'decision');
      const ids = calls.map((l) => l.callId);
      expect(calls.map((l) => l.input)).to.deep.equal(
        ['A', 'B', 'C', 'D', 'E'].map((who) => `{"times":1,"who":"${who}"}`),
      );
      expect(ids[0]).to.equal('same');
      expect(new Set(ids).size).to.equal(5);
      expect(ids.slice(1)).to.not.include.members(['same', 'old', long]);
      // The conversation keeps the model's own ids: its results answer the calls it made.
      const results = agent.messages
        .filter((m) => m.role === 'tool')
        .flatMap((m) => (m.role === 'tool' ? m.results : []));
      expect(results.map((r) => r.callId)).to.deep.equal(['same', 'same', 'old', long, 'same']);
    } finally {
      tmp.cleanup();
    }
  });

  it('stops at maxTurns', async () => {
    const loop = Array.from(
      { length: 5 },
      (_, i): ReplayTurn => ({ toolCalls: [{ name: 'greet', input: { who: `n${i}` } }] }),
    );
    const result = await agentFor(loop, { maxTurns: 3 }).run('go');
    expect(result).to.include({ stopReason: 'max_turns', turns: 3, toolCalls: 3 });
    expect(result.error?.code).to.equal('max_turns');
  });

  it('stops a call that keeps failing the same way after maxRepeatedFailures tries', async () => {
    const same: ReplayTurn = { toolCalls: [{ name: 'fail', input: { message: 'again' } }] };
    const result = await agentFor([same, same, same, same, { text: 'never reached' }], { maxRepeatedFailures: 3 }).run(
      'go',
    );
    expect(result).to.include({ stopReason: 'repeated_failure', turns: 3 });
    expect(result.error?.message).to.match(/same failing call to "fail" 3 times/);
  });

  it('sums usage over the turns of a run', async () => {
    const result = await agentFor([
      { toolCalls: [{ name: 'greet', input: { who: 'x' } }], usage: { inputTokens: 100, outputTokens: 7 } },
      { text: 'ok', usage: { inputTokens: 130, outputTokens: 3 } },
    ]).run('go');
    expect(result.usage).to.deep.equal({ inputTokens: 230, outputTokens: 10 });
  });

  it('keeps the conversation across runs, and refuses a second run while one is going', async () => {
    const agent = agentFor([
      { toolCalls: [{ name: 'slow', input: { ms: 100, tag: 't' } }] },
      { text: 'one' },
      { text: 'two' },
    ]);
    const first = agent.run('a');
    const second = await agent.run('b').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(second)
      .to.be.instanceOf(Error)
      .with.property('message')
      .that.matches(/already running/);
    expect((await first).text).to.equal('one');
    expect((await agent.run('c')).text).to.equal('two');
    expect(agent.messages.map((m) => m.role)).to.deep.equal([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
    ]);
  });

  it('ends with an error result (not a throw) when the provider fails', async () => {
    const rec = recorder();
    const result = await agentFor([]).run('go', { onEvent: rec.onEvent });
    expect(result.stopReason).to.equal('error');
    expect(result.error?.code).to.equal('replay_exhausted');
    expect(rec.of('error')).to.have.length(1);
  });

  it("keeps the reason of a provider that throws something other than an Error (an embedder's own provider)", async () => {
    const provider = {
      name: 'custom',
      model: 'm',
      complete: () => Promise.reject('quota spent for today'),
    };
    const result = await new Agent({ host, provider }).run('go');
    expect(result.stopReason).to.equal('error');
    expect(result.error).to.deep.equal({ code: 'provider', message: 'quota spent for today' });
  });
});

describe('projectTools', () => {
  it('gives every tool a wire name within ^[a-zA-Z0-9_-]{1,64}$, maps calls back, and keeps symbols out of schemas', () => {
    const schema = {
      type: 'object',
      properties: { q: { type: 'string', description: 'q' } },
      [Symbol('typebox')]: 'x',
    };
    const set = projectTools([
      { name: 'docs.search', description: 'd', inputSchema: schema, plugin: 'mcp' },
      { name: 'docs_search', description: 'd', inputSchema: { type: 'object' }, plugin: 'x' },
      { name: 'x'.repeat(80), description: 'd', inputSchema: { type: 'object' }, plugin: 'y' },
    ]);
    const names = set.specs.map((s) => s.name);
    for (const n of names) expect(n).to.match(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(new Set(names).size).to.equal(3);
    expect(set.hostName(names[0]!)).to.equal('docs.search');
    expect(set.hostName(names[1]!)).to.equal('docs_search');
    expect(Object.getOwnPropertySymbols(set.specs[0]!.inputSchema)).to.have.length(0);
    expect(set.specs[1]!.inputSchema).to.deep.equal({ type: 'object', properties: {} });
  });

  it('numbers names that sanitise alike from their common base, and names a nameless tool', () => {
    const tool = (name: string) => ({ name, description: 'd', inputSchema: { type: 'object' }, plugin: 'mcp' });
    const set = projectTools([tool('a.b'), tool('a_b'), tool('a b'), tool('')]);
    expect(set.specs.map((s) => s.name)).to.deep.equal(['a_b', 'a_b_2', 'a_b_3', 'tool']);
    expect(set.hostName('a_b_3')).to.equal('a b');
  });
});
