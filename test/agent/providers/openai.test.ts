import { expect } from 'chai';
import { Agent } from '../../../core/agent/agent.ts';
import { openaiProvider } from '../../../core/agent/providers/openai.ts';
import { OPENAI_TEST_KEY, startOpenAIServer } from '../../fixtures/providers/openai-server.ts';
import { kitHost } from '../helpers.ts';
import { runLoopSuite } from './loop.case.ts';

/** The role:"tool" messages after the last assistant message. */
function trailingToolMessages(body: any): any[] {
  const messages: any[] = body.messages;
  const lastAssistant = messages.findLastIndex((m) => m.role === 'assistant');
  return messages.slice(lastAssistant + 1).filter((m) => m.role === 'tool');
}

runLoopSuite({
  name: 'OpenAI Chat Completions',
  key: OPENAI_TEST_KEY,
  start: startOpenAIServer,
  provider: (server, options = {}) =>
    openaiProvider({
      apiKey: options.apiKey ?? OPENAI_TEST_KEY,
      baseUrl: `${server.url}/v1`,
      model: 'test-model',
      retries: 2,
      backoffMs: 10,
      timeoutMs: 5000,
      ...(options.log ? { log: options.log } : {}),
    }),
  resultsIn: (body) => trailingToolMessages(body).map((m) => ({ id: m.tool_call_id, content: m.content })),
});

describe('openai provider', () => {
  // A regression seen in another agent loop: its OpenAI adapter turned tool results into plain user
  // text, so no tool loop ever completed on OpenAI, OpenRouter or Ollama.
  it('sends each tool result as a role:"tool" message with its tool_call_id, and replays arguments exactly as the model wrote them', async () => {
    const { host, cleanup } = await kitHost();
    const raw = '{ "who" : "Ada",  "times": 2 }';
    const server = await startOpenAIServer([
      { turn: { text: 'Greeting.', toolCalls: [{ id: 'call_1', name: 'greet', arguments: raw }] } },
      { turn: { text: 'Done.' } },
    ]);
    try {
      const agent = new Agent({
        host,
        provider: openaiProvider({ apiKey: OPENAI_TEST_KEY, baseUrl: `${server.url}/v1` }),
        system: 'Be brief.',
      });
      const result = await agent.run('greet Ada twice');
      expect(result).to.include({ stopReason: 'end_turn', text: 'Done.' });
      expect(server.violations).to.deep.equal([]);
      const sent = server.requests[1]!.body.messages;
      expect(sent.map((m: any) => m.role)).to.deep.equal(['system', 'user', 'assistant', 'tool']);
      expect(sent[2].tool_calls[0]).to.deep.equal({
        id: 'call_1',
        type: 'function',
        function: { name: 'greet', arguments: raw },
      });
      expect(sent[3]).to.deep.equal({ role: 'tool', tool_call_id: 'call_1', content: 'hello Ada\nhello Ada' });
      expect(
        server.requests[0]!.body.tools.find((t: any) => t.function.name === 'greet').function.parameters,
      ).to.include({ type: 'object' });
    } finally {
      await server.close();
      await cleanup();
    }
  });

  for (const [framing, step] of [
    ['lone CR line ends', { lineEnd: '\r' }],
    ['CRLF line ends and a byte order mark', { lineEnd: '\r\n', bom: true }],
  ] as const) {
    it(`reads a stream with ${framing}, as the SSE spec allows`, async () => {
      const { host, cleanup } = await kitHost();
      const server = await startOpenAIServer([
        {
          turn: { text: 'Greeting.', toolCalls: [{ id: 'call_1', name: 'greet', input: { who: 'Ada', times: 1 } }] },
          ...step,
        },
        { turn: { text: 'Done.' }, ...step },
      ]);
      try {
        const agent = new Agent({
          host,
          provider: openaiProvider({ apiKey: OPENAI_TEST_KEY, baseUrl: `${server.url}/v1` }),
        });
        const result = await agent.run('greet Ada');
        expect(result).to.include({ stopReason: 'end_turn', text: 'Done.' });
        expect(trailingToolMessages(server.requests[1]!.body)).to.deep.equal([
          { role: 'tool', tool_call_id: 'call_1', content: 'hello Ada' },
        ]);
      } finally {
        await server.close();
        await cleanup();
      }
    });
  }

  it('ends a stream whose one event never ends (a line past 16 MiB) with stream_incomplete, its memory bounded', async () => {
    const { host, cleanup } = await kitHost();
    const server = await startOpenAIServer([{ endless: true }]);
    try {
      const agent = new Agent({
        host,
        provider: openaiProvider({ apiKey: OPENAI_TEST_KEY, baseUrl: `${server.url}/v1`, retries: 0 }),
      });
      const result = await agent.run('hello');
      expect(result.stopReason).to.equal('error');
      expect(result.error?.message).to.match(/stream broke off: an event passed 16777216 bytes/);
    } finally {
      await server.close();
      await cleanup();
    }
  });

  it('works without a key against a local server given by its base URL (Ollama, vLLM, llama.cpp)', () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      expect(openaiProvider({ baseUrl: 'http://127.0.0.1:11434/v1' }).name).to.equal('openai');
      expect(() => openaiProvider({})).to.throw(/OPENAI_API_KEY/);
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });
});
