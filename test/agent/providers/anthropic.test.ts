import { expect } from 'chai';
import { Agent } from '../../../core/agent/agent.ts';
import { anthropicProvider } from '../../../core/agent/providers/anthropic.ts';
import { ProviderError } from '../../../core/agent/messages.ts';
import { ANTHROPIC_TEST_KEY, startAnthropicServer } from '../../fixtures/providers/anthropic-server.ts';
import { kitHost } from '../helpers.ts';
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
