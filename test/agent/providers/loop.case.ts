// One suite, run against each wire format's fake server: a full multi-turn loop through a real host,
// where the fake answers 400 to any request the real API would reject. Every test also asserts that
// the fake saw no such request.
import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import winston from 'winston';
import { Agent } from '../../../core/agent/agent.ts';
import type { Provider } from '../../../core/agent/messages.ts';
import type { Host } from '../../../core/host.ts';
import type { Logger } from '../../../core/log.ts';
import type { FakeServer, Step } from '../../fixtures/providers/fake-server.ts';
import { kitHost, PNG, recorder, withBlocks } from '../helpers.ts';

export interface WireCase {
  name: string;
  key: string;
  start(steps: Step[]): Promise<FakeServer>;
  provider(server: FakeServer, options?: { apiKey?: string; log?: Logger }): Provider;
  /** The tool results a request sends back for the previous turn, in the order they appear. */
  resultsIn(body: any): { id: string; content: string }[];
  /** Every image a request sends, as a `data:` URL, in order. */
  imagesIn(body: any): string[];
}

export function runLoopSuite(c: WireCase): void {
  describe(`full loop against a fake ${c.name} server`, () => {
    let host: Host;
    let cleanup: () => Promise<void>;
    let server: FakeServer | undefined;
    beforeEach(async () => ({ host, cleanup } = await kitHost()));
    afterEach(async () => {
      await server?.close();
      server = undefined;
      await cleanup();
    });

    const agentOn = async (steps: Step[], options: { apiKey?: string; log?: Logger } = {}) => {
      server = await c.start(steps);
      return new Agent({ host, provider: c.provider(server, options), maxTurns: 8 });
    };

    it('runs two calls of one turn concurrently and returns both results, in call order, in one message', async () => {
      const agent = await agentOn([
        {
          turn: {
            text: 'Two at once.',
            toolCalls: [
              { id: 'call_slow', name: 'slow', input: { ms: 400, tag: 'A' } },
              { id: 'call_fast', name: 'slow', input: { ms: 10, tag: 'B' } },
            ],
          },
        },
        { turn: { text: 'Both done.' } },
      ]);
      const rec = recorder();
      const result = await agent.run('go', { onEvent: rec.onEvent });
      expect(server!.violations).to.deep.equal([]);
      expect(result).to.include({ stopReason: 'end_turn', text: 'Both done.', turns: 2, toolCalls: 2 });
      expect(c.resultsIn(server!.requests[1]!.body)).to.deep.equal([
        { id: 'call_slow', content: 'A' },
        { id: 'call_fast', content: 'B' },
      ]);
      // the fast call finished first: they ran at the same time
      expect(rec.of('tool_result').map((e) => e.call.id)).to.deep.equal(['call_fast', 'call_slow']);
      expect(result.usage).to.deep.include({ inputTokens: 20, outputTokens: 10 });
    });

    it('sends the image a tool returned the way the API takes it, and the conversation stays valid after it', async () => {
      server = await c.start([
        {
          turn: {
            toolCalls: [
              { id: 'call_pic', name: 'greet', input: { who: 'Ada' } },
              { id: 'call_fail', name: 'fail', input: { message: 'boom' } },
            ],
          },
        },
        { turn: { text: 'A pixel.' } },
        { turn: { text: 'Still here.' } },
      ]);
      const agent = new Agent({ host: withBlocks(host), provider: c.provider(server), maxTurns: 8 });
      const result = await agent.run('look');
      expect(result).to.include({ stopReason: 'end_turn', text: 'A pixel.' });
      expect((await agent.run('and now?')).text).to.equal('Still here.');
      expect(server.violations).to.deep.equal([]);
      expect(c.imagesIn(server.requests[1]!.body)).to.deep.equal([`data:image/png;base64,${PNG}`]);
      expect(c.imagesIn(server.requests[2]!.body)).to.deep.equal([`data:image/png;base64,${PNG}`]);
      const results = agent.messages.find((m) => m.role === 'tool');
      expect(results?.role === 'tool' && results.results.map((r) => r.blocks?.length ?? 0)).to.deep.equal([6, 0]);
    });

    it('answers an unknown tool with an error result and goes on with the turn', async () => {
      const agent = await agentOn([
        {
          turn: {
            toolCalls: [
              { id: 'call_x', name: 'no_such_tool', input: {} },
              { id: 'call_g', name: 'greet', input: { who: 'Ada' } },
            ],
          },
        },
        { turn: { text: 'Greeted.' } },
      ]);
      const result = await agent.run('go');
      expect(server!.violations).to.deep.equal([]);
      expect(result.stopReason).to.equal('end_turn');
      const [unknown, greeted] = c.resultsIn(server!.requests[1]!.body);
      expect(unknown!.content).to.match(/^Unknown tool "no_such_tool"/);
      expect(greeted).to.deep.equal({ id: 'call_g', content: 'hello Ada' });
    });

    it('turns malformed arguments into an invalid_json result the model corrects', async () => {
      const agent = await agentOn([
        { turn: { toolCalls: [{ id: 'call_bad', name: 'greet', arguments: '{"who": "Ada"' }] } },
        { turn: { toolCalls: [{ id: 'call_good', name: 'greet', input: { who: 'Ada' } }] } },
        { turn: { text: 'Fixed it.' } },
      ]);
      const rec = recorder();
      const result = await agent.run('go', { onEvent: rec.onEvent });
      expect(server!.violations).to.deep.equal([]);
      expect(result).to.include({ stopReason: 'end_turn', turns: 3 });
      expect(rec.of('tool_result').map((e) => e.result.code ?? 'ok')).to.deep.equal(['invalid_json', 'ok']);
      expect(c.resultsIn(server!.requests[1]!.body)[0]!.content).to.match(/^Invalid JSON input for tool "greet"/);
    });

    it('retries a 429 after the retry-after the server asked for, then succeeds', async () => {
      const agent = await agentOn([
        { status: 429, headers: { 'retry-after': '1' }, message: 'rate limited' },
        { turn: { text: 'Hello.' } },
      ]);
      const result = await agent.run('go');
      expect(result).to.include({ stopReason: 'end_turn', text: 'Hello.' });
      expect(server!.requests).to.have.length(2);
      expect(server!.requests[1]!.at - server!.requests[0]!.at).to.be.at.least(900);
    });

    it('ends the run on a stream cut off mid-turn without running its calls, and the conversation stays valid', async () => {
      const agent = await agentOn([
        { cut: { text: 'Reading', toolCalls: [{ name: 'greet', input: { who: 'Ada' } }] } },
        { turn: { text: 'Recovered.' } },
      ]);
      const rec = recorder();
      const cut = await agent.run('go', { onEvent: rec.onEvent });
      expect(cut.stopReason).to.equal('error');
      expect(cut.error?.code).to.equal('stream_incomplete');
      expect(rec.of('tool_call')).to.have.length(0);
      expect(rec.of('error')).to.have.length(1);
      const next = await agent.run('try again');
      expect(next).to.include({ stopReason: 'end_turn', text: 'Recovered.' });
      expect(server!.violations).to.deep.equal([]);
    });

    it('never runs the partial call of a turn cut off by max_tokens', async () => {
      const agent = await agentOn([
        { turn: { text: 'Let me greet', toolCalls: [{ name: 'greet', input: { who: 'Ada' } }], stop: 'max_tokens' } },
        { turn: { text: 'Shorter answer.' } },
      ]);
      const rec = recorder();
      const result = await agent.run('go', { onEvent: rec.onEvent });
      expect(result.stopReason).to.equal('max_tokens');
      expect(result.error?.message).to.match(/1 tool call\(s\) in it were not run/);
      expect(rec.of('tool_call')).to.have.length(0);
      expect(agent.messages.at(-1)).to.deep.equal({ role: 'assistant', text: 'Let me greet', toolCalls: [] });
      const next = await agent.run('be brief');
      expect(next.stopReason).to.equal('end_turn');
      expect(server!.violations).to.deep.equal([]);
    });

    it('aborting mid-call cancels the call in flight and leaves a valid conversation', async () => {
      const agent = await agentOn([
        { turn: { toolCalls: [{ id: 'call_long', name: 'slow', input: { ms: 20_000, tag: 'never' } }] } },
        { turn: { text: 'Ok.' } },
      ]);
      const controller = new AbortController();
      const rec = recorder();
      const result = await agent.run('go', {
        signal: controller.signal,
        onEvent: (e) => {
          rec.onEvent(e);
          if (e.type === 'tool_call') setTimeout(() => controller.abort(), 50);
        },
      });
      expect(result.stopReason).to.equal('aborted');
      expect(rec.of('tool_result').map((e) => e.result.code)).to.deep.equal(['cancelled']);
      const next = await agent.run('never mind');
      expect(next.stopReason).to.equal('end_turn');
      expect(c.resultsIn(server!.requests[1]!.body).map((r) => r.id)).to.deep.equal(['call_long']);
      expect(server!.violations).to.deep.equal([]);
    });

    it('keeps a multi-byte character whole when the network splits it across two chunks', async () => {
      const agent = await agentOn([
        {
          turn: {
            text: 'Prix : 12 € — déjà payé.',
            toolCalls: [{ id: 'call_e', name: 'greet', input: { who: 'Zoë €' } }],
          },
          splitCharacters: true,
        },
        { turn: { text: 'Voilà €.' }, splitCharacters: true },
      ]);
      const rec = recorder();
      const result = await agent.run('go', { onEvent: rec.onEvent });
      expect(server!.violations).to.deep.equal([]);
      expect(rec.of('text').map((e) => e.text)).to.deep.equal(['Prix : 12 € — déjà payé.', 'Voilà €.']);
      expect(rec.of('tool_call').map((e) => e.call.arguments)).to.deep.equal([JSON.stringify({ who: 'Zoë €' })]);
      expect(result).to.include({ stopReason: 'end_turn', text: 'Voilà €.' });
    });

    it('aborting mid-request cancels the model request', async () => {
      const agent = await agentOn([{ hang: true }]);
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const result = await agent.run('go', { signal: controller.signal });
      expect(result.stopReason).to.equal('aborted');
    });

    it('never puts the API key in an error or a log line', async () => {
      const out = new PassThrough();
      let logged = '';
      out.on('data', (d: Buffer) => (logged += d.toString()));
      const log = winston.createLogger({ transports: [new winston.transports.Stream({ stream: out })] });
      const retried = await agentOn([{ status: 503, headers: { 'retry-after-ms': '0' } }, { turn: { text: 'up' } }], {
        log,
      });
      expect((await retried.run('go')).stopReason).to.equal('end_turn');
      expect(logged).to.match(/503/);
      expect(logged).not.to.include(c.key);
      await server!.close();

      const wrongKey = `${c.key}-wrong`;
      const denied = await agentOn([], { apiKey: wrongKey, log });
      const result = await denied.run('go');
      expect(result.stopReason).to.equal('error');
      expect(result.error?.message).to.match(/401/);
      expect(JSON.stringify(result) + logged).not.to.include(wrongKey);
      // The server's text stays, the key alone replaced: the error still says why it was refused
      expect(result.error?.message).to.match(/auth: .*\[redacted\]/);
    });
  });
}
