import { expect } from 'chai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from '../../../core/agent/agent.ts';
import { ProviderError } from '../../../core/agent/messages.ts';
import { createProvider } from '../../../core/agent/providers/index.ts';
import { maxTokensFieldFor, openaiProvider } from '../../../core/agent/providers/openai.ts';
import { sse } from '../../fixtures/providers/fake-server.ts';
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
  imagesIn: (body) =>
    body.messages
      .flatMap((m: any) => (m.role === 'user' && Array.isArray(m.content) ? m.content : []))
      .filter((part: any) => part.type === 'image_url')
      .map((part: any) => part.image_url.url),
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

  it('sends the output limit as max_completion_tokens to OpenAI, which refuses max_tokens for a reasoning model', async () => {
    const server = await startOpenAIServer([{ turn: { text: 'Thought about it.' } }]);
    try {
      const ask = (maxTokensField: 'max_tokens' | 'max_completion_tokens') =>
        openaiProvider({
          apiKey: OPENAI_TEST_KEY,
          baseUrl: `${server.url}/v1`,
          model: 'o4-mini',
          maxTokens: 1000,
          maxTokensField,
          retries: 0,
        }).complete({ messages: [{ role: 'user', content: 'think' }], tools: [] });
      const refused = await ask('max_tokens').catch((error: unknown) => error);
      expect(refused).to.be.instanceOf(ProviderError);
      expect((refused as ProviderError).message).to.match(/'max_tokens' is not supported with this model/);
      const answer = await ask('max_completion_tokens');
      expect(answer.message.text).to.equal('Thought about it.');
      expect(server.requests[1]!.body).to.include({ max_completion_tokens: 1000 }).and.not.have.property('max_tokens');
    } finally {
      await server.close();
    }
  });

  it('names the URL it asked on a 404; says to check the base URL when the server gave no message of its own', async () => {
    // As Ollama answers: a path it does not have, as plain text; a model it does not have, as an API error.
    const server = createServer((req, res) => {
      req.resume().on('end', () => {
        if (req.url === '/v1/chat/completions')
          res
            .writeHead(404, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { message: 'model "gpt-4.1" not found, try pulling it first' } }));
        else res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };
    const refusal = async (baseUrl: string) =>
      (await openaiProvider({ baseUrl, retries: 0 })
        .complete(request)
        .catch((error: unknown) => error)) as ProviderError;
    try {
      const noV1 = await refusal(origin);
      expect(noV1).to.be.instanceOf(ProviderError);
      expect(noV1.code).to.equal('http_error');
      expect(noV1.message).to.equal(
        `the OpenAI-compatible API at ${origin} answered 404 to POST ${origin}/chat/completions ` +
          '(no such endpoint: check the base URL): 404 page not found',
      );
      expect((await refusal(`${origin}/v1`)).message).to.equal(
        `the OpenAI-compatible API at ${origin}/v1 answered 404 to POST ${origin}/v1/chat/completions: ` +
          'model "gpt-4.1" not found, try pulling it first',
      );
      // A proxy's credentials in the base URL are not shown
      const withCredentials = `http://me:pw-secret-1234@${origin.slice('http://'.length)}`;
      expect((await refusal(withCredentials)).message).to.equal(
        `the OpenAI-compatible API at ${origin} answered 404 to POST ${origin}/chat/completions ` +
          '(no such endpoint: check the base URL): 404 page not found',
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('says a server that answers one JSON body instead of a stream must stream, quoting what it sent', async () => {
    const body = JSON.stringify({ object: 'chat.completion', choices: [{ message: { content: 'hi' } }] });
    const server = createServer((req, res) => {
      req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    try {
      const provider = openaiProvider({ baseUrl, retries: 0 });
      const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };
      const refused = (await provider.complete(request).catch((error: unknown) => error)) as ProviderError;
      expect(refused).to.be.instanceOf(ProviderError);
      expect(refused.code).to.equal('bad_response');
      expect(refused.message).to.equal(
        `the OpenAI-compatible API at ${baseUrl} answered with one JSON body, not a stream: it must answer a request ` +
          `with "stream": true in server-sent events (text/event-stream). It sent: ${body}`,
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('quotes no part of a key the server echoes across the cut of what it quotes', async () => {
    const apiKey = 'sk-straddles-the-cut-0123456789abcdef';
    // The key begins 20 characters before the 500 quoted: cut first, its head would show
    const server = createServer((req, res) => {
      req
        .resume()
        .on('end', () =>
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(`${'x'.repeat(473)}${req.headers.authorization}`),
        );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    try {
      const provider = openaiProvider({ apiKey, baseUrl, retries: 0 });
      const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };
      const refused = (await provider.complete(request).catch((error: unknown) => error)) as ProviderError;
      expect(refused.code).to.equal('bad_response');
      expect(refused.message).not.to.include('sk-straddles');
      expect(refused.message).to.match(/It sent: x+\[redacted\]$/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('keeps max_tokens for a compatible server that only knows it: the default off api.openai.com, and a config setting', async () => {
    const server = await startOpenAIServer([{ turn: { text: 'a' } }, { turn: { text: 'b' } }], { legacy: true });
    try {
      const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };
      const byDefault = openaiProvider({ apiKey: OPENAI_TEST_KEY, baseUrl: `${server.url}/v1`, maxTokens: 64 });
      expect((await byDefault.complete(request)).message.text).to.equal('a');
      expect(server.requests[0]!.body).to.include({ max_tokens: 64 }).and.not.have.property('max_completion_tokens');
      const saved = process.env.OPENAI_API_KEY;
      process.env.OPENAI_API_KEY = OPENAI_TEST_KEY;
      try {
        const configured = createProvider({
          name: 'openai',
          baseUrl: `${server.url}/v1`,
          maxTokens: 64,
          maxTokensField: 'max_completion_tokens',
          retries: 0,
        });
        const refused = await configured.complete(request).catch((error: unknown) => error);
        expect((refused as ProviderError).message).to.match(
          /Unrecognized request argument supplied: max_completion_tokens/,
        );
      } finally {
        if (saved === undefined) delete process.env.OPENAI_API_KEY;
        else process.env.OPENAI_API_KEY = saved;
      }
      expect(maxTokensFieldFor('https://api.openai.com/v1')).to.equal('max_completion_tokens');
      expect(maxTokensFieldFor('https://my-team.openai.azure.com/openai/v1')).to.equal('max_completion_tokens');
      expect(maxTokensFieldFor('http://localhost:11434/v1')).to.equal('max_tokens');
      expect(maxTokensFieldFor('https://openrouter.ai/api/v1')).to.equal('max_tokens');
    } finally {
      await server.close();
    }
  });

  it('asks for usage on the stream (stream_options.include_usage) and counts cached prompt tokens apart', async () => {
    const { host, cleanup } = await kitHost();
    const server = await startOpenAIServer([
      { turn: { text: 'Cached.', usage: { input: 40, output: 6, cacheRead: 960 } } },
    ]);
    try {
      const agent = new Agent({
        host,
        provider: openaiProvider({ apiKey: OPENAI_TEST_KEY, baseUrl: `${server.url}/v1`, model: 'gpt-4.1' }),
      });
      const result = await agent.run('hi');
      expect(server.requests[0]!.body).to.deep.include({ stream: true, stream_options: { include_usage: true } });
      // the API's prompt_tokens (1000) includes the 960 cached: input counts the other 40
      expect(result.usage).to.deep.equal({ inputTokens: 40, outputTokens: 6, cacheReadTokens: 960 });
      // gpt-4.1: $2 input, $0.50 cached, $8 output per million
      expect(result.costUsd).to.be.closeTo((40 * 2 + 960 * 0.5 + 6 * 8) / 1e6, 1e-12);
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

  // The audit ties a call's lines together by its id, and the id goes back to the server with the
  // result: a number or an object there was passed on as it came (the other providers make it text).
  it("takes a call's id and name as text whatever JSON type the server sent", async () => {
    const server = await startOpenAIServer([
      {
        frames: [
          sse({
            choices: [{ delta: { tool_calls: [{ index: 0, id: 7, function: { name: 'greet', arguments: '{}' } }] } }],
          }),
          sse({
            choices: [{ delta: { tool_calls: [{ index: 1, id: { a: 1 }, function: { name: 5, arguments: '{}' } }] } }],
          }),
          sse({ choices: [{ delta: {}, finish_reason: 'tool_calls' }] }),
          sse('[DONE]'),
        ],
      },
    ]);
    try {
      const provider = openaiProvider({ apiKey: OPENAI_TEST_KEY, baseUrl: `${server.url}/v1`, retries: 0 });
      const answer = await provider.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
      expect(answer.message.toolCalls).to.deep.equal([
        { id: '7', name: 'greet', arguments: '{}' },
        { id: '[object Object]', name: '5', arguments: '{}' },
      ]);
    } finally {
      await server.close();
    }
  });
});
