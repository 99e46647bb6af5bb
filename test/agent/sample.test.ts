// ctx.sample under the agent loop: the agent's own provider answers it with one model request of
// its own (no tools, the tool's system prompt, its maxTokens under the provider's limit), on the
// wire formats the fake servers enforce; the tokens count in the run's usage.
import { expect } from 'chai';
import { join } from 'node:path';
import { Agent } from '../../core/agent/agent.ts';
import type { Provider } from '../../core/agent/messages.ts';
import { anthropicProvider } from '../../core/agent/providers/anthropic.ts';
import { openaiProvider } from '../../core/agent/providers/openai.ts';
import { createHost, type Host } from '../../core/host.ts';
import { ANTHROPIC_TEST_KEY, startAnthropicServer } from '../fixtures/providers/anthropic-server.ts';
import type { FakeServer, Step } from '../fixtures/providers/fake-server.ts';
import { OPENAI_TEST_KEY, startOpenAIServer } from '../fixtures/providers/openai-server.ts';
import { FIXTURES } from '../helpers.ts';

/** The fields of a request body this test reads, in either wire format. */
interface WireBody {
  system?: { text: string }[];
  max_tokens?: number;
  tools?: unknown;
  messages: { role: string; content: string | { text?: string }[] }[];
}

const textOf = (content: WireBody['messages'][number]['content']) =>
  typeof content === 'string' ? content : content.map((b) => b.text).join('');

interface Case {
  name: string;
  start(steps: Step[]): Promise<FakeServer>;
  provider(url: string): Provider;
  /** The sample request's system prompt, output limit and messages, as this wire carries them. */
  sent(body: WireBody): { system: unknown; limit: unknown; messages: unknown; tools: unknown };
}

const CASES: Case[] = [
  {
    name: 'Anthropic Messages',
    start: startAnthropicServer,
    provider: (baseUrl) => anthropicProvider({ apiKey: ANTHROPIC_TEST_KEY, baseUrl, retries: 0, maxTokens: 1000 }),
    sent: (body) => ({
      system: body.system?.[0]?.text,
      limit: body.max_tokens,
      messages: body.messages.map((m) => [m.role, textOf(m.content)]),
      tools: body.tools,
    }),
  },
  {
    name: 'OpenAI chat completions',
    start: startOpenAIServer,
    provider: (baseUrl) =>
      openaiProvider({ apiKey: OPENAI_TEST_KEY, baseUrl: `${baseUrl}/v1`, retries: 0, maxTokens: 1000 }),
    sent: (body) => ({
      system: body.messages.find((m) => m.role === 'system')?.content,
      limit: body.max_tokens,
      messages: body.messages.filter((m) => m.role !== 'system').map((m) => [m.role, textOf(m.content)]),
      tools: body.tools,
    }),
  },
];

for (const c of CASES) {
  describe(`ctx.sample under the agent loop (${c.name})`, function () {
    this.timeout(20_000);
    let host: Host;

    before(async () => {
      host = await createHost({
        cwd: join(FIXTURES, 'plugins'),
        audit: false,
        logLevel: 'error',
        config: {
          builtins: false,
          policy: { default: 'allow' },
          plugins: [{ module: './asking.ts', isolation: 'worker' }],
        },
      });
    });
    after(() => host.close());

    it("answers with the agent's own model: one request without tools, the tool's system prompt and maxTokens", async () => {
      const server = await c.start([
        {
          turn: {
            toolCalls: [
              {
                id: 'call_1',
                name: 'ask_model',
                input: { prompt: 'Name a colour.', maxTokens: 50, system: 'One word.' },
              },
            ],
            usage: { input: 10, output: 5 },
          },
        },
        { turn: { text: 'Teal', usage: { input: 7, output: 2 } } },
        { turn: { text: 'The tool heard teal.', usage: { input: 20, output: 6 } } },
      ]);
      try {
        const agent = new Agent({ host, provider: c.provider(server.url) });
        const result = await agent.run('Ask the tool.');
        expect(server.violations).to.deep.equal([]);
        expect(result.stopReason, JSON.stringify(result.error)).to.equal('end_turn');
        const tool = agent.messages.find((m) => m.role === 'tool');
        expect(tool?.role === 'tool' && JSON.parse(tool.results[0]!.content)).to.deep.equal({
          role: 'assistant',
          content: { type: 'text', text: 'Teal' },
          model: agent.provider.model,
          stopReason: 'endTurn',
        });
        expect(server.requests).to.have.length(3);
        expect(c.sent(server.requests[1]!.body as WireBody)).to.deep.equal({
          system: 'One word.',
          limit: 50,
          messages: [['user', 'Name a colour.']],
          tools: undefined,
        });
        // The sample's tokens are the run's too.
        expect(result.usage.outputTokens).to.equal(5 + 2 + 6);
      } finally {
        await server.close();
      }
    });
  });
}
