import { expect } from 'chai';
import { Agent } from '../../../core/agent/agent.ts';
import { anthropicProvider } from '../../../core/agent/providers/anthropic.ts';
import { ProviderError } from '../../../core/agent/messages.ts';
import { BUILTIN_PRICING, costOf } from '../../../core/agent/pricing.ts';
import { ANTHROPIC_TEST_KEY, startAnthropicServer } from '../../fixtures/providers/anthropic-server.ts';
import { kitHost, recorder } from '../helpers.ts';
import { runLoopSuite } from './loop.case.ts';

runLoopSuite({
  name: 'Anthropic Messages',
  key: ANTHROPIC_TEST_KEY,
  start: startAnthropicServer,
  provider: (server, options = {}) =>
    anthropicProvider({
      apiKey: options.apiKey ?? ANTHROPIC_TEST_KEY,
      baseUrl: server.url,
      retries: 2,
      backoffMs: 10,
      timeoutMs: 5000,
      ...(options.log ? { log: options.log } : {}),
    }),
  resultsIn: (body) =>
    body.messages
      .at(-1)
      .content.filter((b: any) => b.type === 'tool_result')
      .map((b: any) => ({ id: b.tool_use_id, content: b.content })),
  imagesIn: (body) =>
    body.messages
      .flatMap((m: any) => m.content)
      .flatMap((b: any) => (b.type === 'tool_result' && Array.isArray(b.content) ? b.content : []))
      .filter((b: any) => b.type === 'image')
      .map((b: any) => `data:${b.source.media_type};base64,${b.source.data}`),
});

describe('anthropic provider', () => {
  it('sends every result of a turn in one user message, results first, is_error on failures, and a later prompt in that same message', async () => {
    const { host, cleanup } = await kitHost();
    const server = await startAnthropicServer([
      {
        turn: {
          toolCalls: [
            { id: 'toolu_a', name: 'fail', input: { message: 'boom' } },
            { id: 'toolu_b', name: 'greet', input: { who: 'Bo' } },
          ],
        },
      },
      { hang: true },
      { turn: { text: 'Next.' } },
    ]);
    try {
      const agent = new Agent({
        host,
        provider: anthropicProvider({ apiKey: ANTHROPIC_TEST_KEY, baseUrl: server.url, retries: 0 }),
      });
      const controller = new AbortController();
      // the second request hangs: abort it, so the conversation ends on the results
      const first = await agent.run('go', {
        signal: controller.signal,
        onEvent: (e) => e.type === 'turn_start' && e.turn === 2 && setTimeout(() => controller.abort(), 50),
      });
      expect(first.stopReason).to.equal('aborted');
      await agent.run('and now?');
      expect(server.violations).to.deep.equal([]);
      const last = server.requests.at(-1)!.body.messages.at(-1);
      expect(last.role).to.equal('user');
      expect(last.content.map((b: any) => [b.type, b.tool_use_id ?? b.text, b.is_error ?? false])).to.deep.equal([
        ['tool_result', 'toolu_a', true],
        ['tool_result', 'toolu_b', false],
        ['text', 'and now?', false],
      ]);
    } finally {
      await server.close();
      await cleanup();
    }
  });

  /** Every `cache_control` in a request, by where it is. */
  const marksOf = (body: any): string[] => [
    ...body.tools.flatMap((t: any, i: number) => (t.cache_control ? [`tools.${i}`] : [])),
    ...body.system.flatMap((b: any, i: number) => (b.cache_control ? [`system.${i}`] : [])),
    ...body.messages.flatMap((m: any, i: number) =>
      m.content.flatMap((b: any, j: number) => (b.cache_control ? [`messages.${i}.${b.type}.${j}`] : [])),
    ),
  ];

  it('marks the last tool, the system prompt and the last block of the conversation for prompt caching', async () => {
    const { host, cleanup } = await kitHost();
    const server = await startAnthropicServer([
      { turn: { toolCalls: [{ id: 'toolu_g', name: 'greet', input: { who: 'Bo' } }] } },
      { turn: { text: 'Done.' } },
    ]);
    try {
      const agent = new Agent({
        host,
        provider: anthropicProvider({ apiKey: ANTHROPIC_TEST_KEY, baseUrl: server.url }),
        system: 'Be brief.',
      });
      expect((await agent.run('greet Bo')).stopReason).to.equal('end_turn');
      expect(server.violations).to.deep.equal([]);
      const [first, second] = server.requests.map((r) => r.body);
      const lastTool = `tools.${first.tools.length - 1}`;
      expect(first.system).to.deep.equal([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
      expect(marksOf(first)).to.deep.equal([lastTool, 'system.0', 'messages.0.text.0']);
      expect(marksOf(second)).to.deep.equal([lastTool, 'system.0', 'messages.2.tool_result.0']);
      // the conversation kept no mark: each request marks its own last block
      expect(agent.messages.some((m) => JSON.stringify(m).includes('cache_control'))).to.equal(false);
    } finally {
      await server.close();
      await cleanup();
    }
  });

  it('reads the cached prefix on the next turn: usage and cost report cache writes and reads, per turn and per session', async () => {
    const { host, cleanup } = await kitHost();
    const server = await startAnthropicServer([
      {
        turn: { toolCalls: [{ id: 'toolu_g', name: 'greet', input: { who: 'Bo' } }], usage: { input: 12, output: 30 } },
      },
      { turn: { text: 'Done.', usage: { input: 15, output: 4 } } },
      { turn: { text: 'Again.', usage: { input: 9, output: 2 } } },
    ]);
    try {
      const agent = new Agent({
        host,
        provider: anthropicProvider({ apiKey: ANTHROPIC_TEST_KEY, baseUrl: server.url }),
        // long enough to pass the 1,024-token minimum a prefix needs to be cached
        system: 'Answer carefully and cite the file you read. '.repeat(120),
      });
      const rec = recorder();
      const result = await agent.run('greet Bo', { onEvent: rec.onEvent });
      expect(server.violations).to.deep.equal([]);
      const [one, two] = rec.of('turn_end');
      expect(one!.usage.cacheReadTokens).to.equal(0);
      expect(one!.usage.cacheWriteTokens).to.be.above(1024);
      // the second request starts with all of the first: it reads that from the cache, and writes its new tail
      expect(two!.usage.cacheReadTokens).to.equal(one!.usage.cacheWriteTokens);
      expect(two!.usage.cacheWriteTokens).to.be.above(0);
      expect(result.usage).to.deep.equal({
        inputTokens: 27,
        outputTokens: 34,
        cacheReadTokens: two!.usage.cacheReadTokens,
        cacheWriteTokens: one!.usage.cacheWriteTokens! + two!.usage.cacheWriteTokens!,
      });
      const price = BUILTIN_PRICING['claude-sonnet-4-5']!;
      expect(one!.costUsd).to.be.closeTo(costOf(one!.usage, price), 1e-12);
      expect(result.costUsd).to.be.closeTo(costOf(result.usage, price), 1e-12);
      expect(two!.session).to.deep.equal({ usage: result.usage, costUsd: result.costUsd });

      const next = await agent.run('and again');
      expect(next.usage.cacheReadTokens).to.be.above(two!.usage.cacheReadTokens!);
      expect(agent.usage.usage.outputTokens).to.equal(36);
    } finally {
      await server.close();
      await cleanup();
    }
  });

  it('the fake refuses cache marks the real API refuses: more than 4, on a message, on an empty text block, of another type', async () => {
    const server = await startAnthropicServer();
    const post = async (body: Record<string, unknown>) => {
      const res = await fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': ANTHROPIC_TEST_KEY,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ model: 'm', max_tokens: 10, ...body }),
      });
      return { status: res.status, message: ((await res.json()) as any).error.message as string };
    };
    const eph = { type: 'ephemeral' };
    const text = (t: string, marked = true) => ({ type: 'text', text: t, ...(marked ? { cache_control: eph } : {}) });
    try {
      expect(
        await post({
          system: [text('a'), text('b'), text('c')],
          messages: [{ role: 'user', content: [text('d'), text('e')] }],
        }),
      ).to.deep.equal({ status: 400, message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.' });
      expect(
        (await post({ messages: [{ role: 'user', content: [text('d', false)], cache_control: eph }] })).message,
      ).to.match(/messages\.0\.cache_control: Extra inputs are not permitted/);
      expect((await post({ messages: [{ role: 'user', content: [text('d', false), text('')] }] })).message).to.match(
        /cache_control cannot be set for empty text blocks/,
      );
      expect(
        (
          await post({
            messages: [{ role: 'user', content: [{ type: 'text', text: 'd', cache_control: { type: 'persistent' } }] }],
          })
        ).message,
      ).to.match(/Input should be 'ephemeral'/);
    } finally {
      await server.close();
    }
  });

  it('needs a key, and says which variable to set', () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      expect(() => anthropicProvider()).to.throw(ProviderError, /ANTHROPIC_API_KEY/);
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
  });
});
