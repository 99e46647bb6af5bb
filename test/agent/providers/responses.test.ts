import { expect } from 'chai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from '../../../core/agent/agent.ts';
import { ProviderError } from '../../../core/agent/messages.ts';
import { openaiResponsesProvider } from '../../../core/agent/providers/openai-responses.ts';
import { sse } from '../../fixtures/providers/fake-server.ts';
import { RESPONSES_TEST_KEY, startResponsesServer } from '../../fixtures/providers/responses-server.ts';
import { kitHost, recorder } from '../helpers.ts';
import { runLoopSuite } from './loop.case.ts';

/** The function_call_output items after the input's last function_call. */
function trailingOutputs(body: any): any[] {
  const input: any[] = body.input;
  const lastCall = input.findLastIndex((item) => item.type === 'function_call');
  return input.slice(lastCall + 1).filter((item) => item.type === 'function_call_output');
}

for (const stream of [true, false]) {
  runLoopSuite({
    name: `OpenAI Responses (${stream ? 'streamed' : 'not streamed'})`,
    key: RESPONSES_TEST_KEY,
    start: startResponsesServer,
    provider: (server, options = {}) =>
      openaiResponsesProvider({
        apiKey: options.apiKey ?? RESPONSES_TEST_KEY,
        baseUrl: `${server.url}/v1`,
        model: 'test-model',
        stream,
        retries: 2,
        backoffMs: 10,
        timeoutMs: 5000,
        ...(options.log ? { log: options.log } : {}),
      }),
    resultsIn: (body) => trailingOutputs(body).map((item) => ({ id: item.call_id, content: item.output })),
    imagesIn: (body) =>
      body.input
        .flatMap((item: any) => (Array.isArray(item.output) ? item.output : []))
        .filter((part: any) => part.type === 'input_image')
        .map((part: any) => part.image_url),
  });
}

describe('openai-responses provider', () => {
  it('sends calls back as function_call items, each answered by a function_call_output with its call_id, with flat non-strict tools and the system prompt as instructions', async () => {
    const { host, cleanup } = await kitHost();
    const raw = '{ "who" : "Ada",  "times": 2 }';
    const server = await startResponsesServer([
      {
        turn: {
          text: 'Greeting.',
          toolCalls: [
            { id: 'call_1', name: 'greet', arguments: raw },
            { id: 'call_2', name: 'fail', input: { message: 'boom' } },
          ],
        },
      },
      { turn: { text: 'Done.' } },
    ]);
    try {
      const agent = new Agent({
        host,
        provider: openaiResponsesProvider({ apiKey: RESPONSES_TEST_KEY, baseUrl: `${server.url}/v1`, maxTokens: 500 }),
        system: 'Be brief.',
      });
      const result = await agent.run('greet Ada twice');
      expect(result).to.include({ stopReason: 'end_turn', text: 'Done.' });
      expect(server.violations).to.deep.equal([]);
      const first = server.requests[0]!.body;
      expect(first).to.include({ instructions: 'Be brief.', store: false, stream: true, max_output_tokens: 500 });
      expect(first.input).to.deep.equal([{ role: 'user', content: 'greet Ada twice' }]);
      const greet = first.tools.find((t: any) => t.name === 'greet');
      expect(Object.keys(greet).sort()).to.deep.equal(['description', 'name', 'parameters', 'strict', 'type']);
      expect(greet).to.include({ type: 'function', strict: false });
      expect(greet.parameters).to.include({ type: 'object' });
      const input = server.requests[1]!.body.input;
      expect(input.slice(1)).to.deep.equal([
        { role: 'assistant', content: 'Greeting.' },
        { type: 'function_call', call_id: 'call_1', name: 'greet', arguments: raw },
        { type: 'function_call', call_id: 'call_2', name: 'fail', arguments: '{"message":"boom"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'hello Ada\nhello Ada' },
        { type: 'function_call_output', call_id: 'call_2', output: 'Tool "fail" failed: boom' },
      ]);
    } finally {
      await server.close();
      await cleanup();
    }
  });

  it('streams text as deltas when streamed, and hands over the whole text at once when not; usage takes cached tokens out of the input count', async () => {
    for (const stream of [true, false]) {
      const { host, cleanup } = await kitHost();
      const server = await startResponsesServer([
        { turn: { text: 'Hello there.', usage: { input: 40, output: 7, cacheRead: 60 } } },
      ]);
      try {
        const agent = new Agent({
          host,
          provider: openaiResponsesProvider({ apiKey: RESPONSES_TEST_KEY, baseUrl: `${server.url}/v1`, stream }),
        });
        const rec = recorder();
        const result = await agent.run('hi', { onEvent: rec.onEvent });
        expect(server.violations).to.deep.equal([]);
        expect(server.requests[0]!.body.stream).to.equal(stream);
        expect(rec.of('text_delta').map((e) => e.text)).to.deep.equal(stream ? ['Hello ', 'there.'] : ['Hello there.']);
        expect(result).to.include({ stopReason: 'end_turn', text: 'Hello there.' });
        expect(result.usage).to.deep.equal({ inputTokens: 40, outputTokens: 7, cacheReadTokens: 60 });
      } finally {
        await server.close();
        await cleanup();
      }
    }
  });

  it('reads a turn from the stream it built when the terminal event carries no output', async () => {
    // Some servers that speak the Responses API send `response.completed` with an empty output.
    const frames = [
      sse({
        type: 'response.output_item.added',
        output_index: 0,
        item: { type: 'function_call', id: 'fc_1', call_id: 'call_9', name: 'greet', arguments: '' },
      }),
      sse({ type: 'response.function_call_arguments.delta', output_index: 0, item_id: 'fc_1', delta: '{"who":' }),
      sse({ type: 'response.function_call_arguments.delta', output_index: 0, item_id: 'fc_1', delta: '"Bo"}' }),
      sse({
        type: 'response.completed',
        response: { status: 'completed', output: [], usage: { input_tokens: 3, output_tokens: 2 } },
      }),
    ];
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(frames.join(''));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const provider = openaiResponsesProvider({ apiKey: 'k', baseUrl: `http://127.0.0.1:${port}/v1` });
      const answer = await provider.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
      expect(answer.message.toolCalls).to.deep.equal([{ id: 'call_9', name: 'greet', arguments: '{"who":"Bo"}' }]);
      expect(answer.stopReason).to.equal('tool_use');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('the fake refuses what the real API refuses: an output with no call, a call with no output, strict tools with optional properties, Chat Completions fields', async () => {
    const server = await startResponsesServer();
    const post = async (body: unknown) => {
      const res = await fetch(`${server.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${RESPONSES_TEST_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = (await res.json()) as any;
      return { status: res.status, message: answer.error?.message as string | undefined };
    };
    const tool = {
      type: 'function',
      name: 'greet',
      parameters: { type: 'object', properties: { who: { type: 'string' } } },
    };
    try {
      expect(
        await post({ model: 'm', input: [{ type: 'function_call_output', call_id: 'call_x', output: 'x' }] }),
      ).to.deep.equal({ status: 400, message: 'No tool call found for function call output with call_id call_x.' });
      expect(
        await post({
          model: 'm',
          input: [{ type: 'function_call', call_id: 'call_y', name: 'greet', arguments: '{}' }],
        }),
      ).to.deep.equal({ status: 400, message: 'No tool output found for function call call_y.' });
      expect((await post({ model: 'm', input: 'hi', tools: [tool] })).message).to.match(
        /'additionalProperties' is required/,
      );
      server.push({ turn: { text: 'ok' } });
      expect((await post({ model: 'm', input: 'hi', tools: [{ ...tool, strict: false }] })).status).to.equal(200);
      expect((await post({ model: 'm', input: 'hi', tools: [{ type: 'function', function: tool }] })).message).to.match(
        /Missing required parameter: 'tools\[0\]\.name'/,
      );
      expect((await post({ model: 'm', messages: [] })).message).to.match(/moved to 'input'/);
      expect((await post({ model: 'm', input: 'hi', max_tokens: 100 })).message).to.match(/max_output_tokens/);
    } finally {
      await server.close();
    }
  });

  it('needs a key or a base URL, and says which variable to set', () => {
    const saved = { key: process.env.OPENAI_API_KEY, base: process.env.OPENAI_BASE_URL };
    delete process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_BASE_URL;
    try {
      expect(() => openaiResponsesProvider()).to.throw(ProviderError, /OPENAI_API_KEY/);
    } finally {
      if (saved.key !== undefined) process.env.OPENAI_API_KEY = saved.key;
      if (saved.base !== undefined) process.env.OPENAI_BASE_URL = saved.base;
    }
  });
});
