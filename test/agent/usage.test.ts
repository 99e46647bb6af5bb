import { expect } from 'chai';
import { Agent } from '../../core/agent/agent.ts';
import { BUILTIN_PRICING, costOf, pricingOf } from '../../core/agent/pricing.ts';
import { createProvider } from '../../core/agent/providers/index.ts';
import { replayProvider, type ReplayTurn } from '../../core/agent/providers/replay.ts';
import { validateConfig } from '../../core/config.ts';
import type { Host } from '../../core/host.ts';
import { kitHost, recorder } from './helpers.ts';

describe('usage and cost', () => {
  let host: Host;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ host, cleanup } = await kitHost()));
  afterEach(() => cleanup());

  const price = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
  const turns: ReplayTurn[] = [
    {
      toolCalls: [{ name: 'greet', input: { who: 'A' } }],
      usage: { inputTokens: 100, outputTokens: 20, cacheWriteTokens: 2000 },
    },
    { text: 'Hi A.', usage: { inputTokens: 30, outputTokens: 5, cacheReadTokens: 2000 } },
    { text: 'Again.', usage: { inputTokens: 10, outputTokens: 2, cacheReadTokens: 2100 } },
  ];

  it('reports each turn’s tokens and cost on turn_end, with the running session total, across runs', async () => {
    const agent = new Agent({ host, provider: replayProvider({ script: { turns }, pricing: price }) });
    const rec = recorder();
    const first = await agent.run('greet A', { onEvent: rec.onEvent });
    const second = await agent.run('again', { onEvent: rec.onEvent });

    const ends = rec.of('turn_end');
    expect(ends.map((e) => e.usage)).to.deep.equal(turns.map((t) => t.usage));
    const perTurn = [
      (100 * 3 + 20 * 15 + 2000 * 3.75) / 1e6,
      (30 * 3 + 5 * 15 + 2000 * 0.3) / 1e6,
      (10 * 3 + 2 * 15 + 2100 * 0.3) / 1e6,
    ];
    for (const [i, e] of ends.entries()) expect(e.costUsd).to.be.closeTo(perTurn[i]!, 1e-12);
    // the session total runs on across runs; a run's own usage starts from zero
    expect(ends.map((e) => e.session.usage.outputTokens)).to.deep.equal([20, 25, 27]);
    expect(ends[2]!.session.costUsd).to.be.closeTo(perTurn[0]! + perTurn[1]! + perTurn[2]!, 1e-12);
    expect(first.usage).to.deep.equal({
      inputTokens: 130,
      outputTokens: 25,
      cacheReadTokens: 2000,
      cacheWriteTokens: 2000,
    });
    expect(first.costUsd).to.be.closeTo(perTurn[0]! + perTurn[1]!, 1e-12);
    expect(second.usage).to.deep.equal({ inputTokens: 10, outputTokens: 2, cacheReadTokens: 2100 });
    expect(agent.usage).to.deep.equal(ends[2]!.session);
    // a report is a copy: an observer cannot change the agent's count
    ends[2]!.session.usage.inputTokens = 0;
    expect(agent.usage.usage.inputTokens).to.equal(140);
  });

  it('reports tokens without a cost when the model’s price is unknown', async () => {
    const agent = new Agent({ host, provider: replayProvider({ script: { turns } }) });
    const rec = recorder();
    const result = await agent.run('greet A', { onEvent: rec.onEvent });
    expect(result.usage.inputTokens).to.equal(130);
    expect(result).not.to.have.property('costUsd');
    expect(rec.of('turn_end')[0]).not.to.have.property('costUsd');
    expect(agent.usage).to.deep.equal({ usage: result.usage });
  });

  it('prices a model from the config first, then the built-in table; a snapshot id costs what its alias does, another model nothing', () => {
    expect(pricingOf('claude-sonnet-4-5')).to.equal(BUILTIN_PRICING['claude-sonnet-4-5']);
    expect(pricingOf('claude-sonnet-4-5-20250929')).to.equal(BUILTIN_PRICING['claude-sonnet-4-5']);
    expect(pricingOf('gpt-4.1-2025-04-14')).to.equal(BUILTIN_PRICING['gpt-4.1']);
    expect(pricingOf('gpt-4.1-turbo')).to.equal(undefined);
    expect(pricingOf('qwen3')).to.equal(undefined);
    expect(pricingOf('constructor')).to.equal(undefined);
    const mine = { input: 1, output: 2 };
    expect(pricingOf('gpt-4.1', { 'gpt-4.1': mine })).to.equal(mine);
    expect(pricingOf('qwen3', { qwen3: mine })).to.equal(mine);
    // a missing cache price is the input price
    expect(costOf({ inputTokens: 1e6, outputTokens: 0, cacheReadTokens: 1e6, cacheWriteTokens: 1e6 }, mine)).to.equal(
      3,
    );
  });

  it('createProvider: provider.pricing wins over the top-level table, which wins over the built-in one', () => {
    const own = { input: 9, output: 9 };
    const table = { 'claude-haiku-4-5': { input: 7, output: 7 } };
    const settings = { name: 'anthropic' as const, model: 'claude-haiku-4-5' };
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-unused';
    try {
      expect(createProvider(settings).pricing).to.equal(BUILTIN_PRICING['claude-haiku-4-5']);
      expect(createProvider(settings, { prices: table }).pricing).to.equal(table['claude-haiku-4-5']);
      expect(createProvider({ ...settings, pricing: own }, { prices: table }).pricing).to.equal(own);
      expect(createProvider({ ...settings, model: 'claude-next' }).pricing).to.equal(undefined);
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('the config checks prices and names what is wrong', () => {
    expect(() => validateConfig({ pricing: { 'my-model': { input: -1, output: 2 } } }, 'rousseau.config.ts')).to.throw(
      /pricing\.my-model\.input/,
    );
    expect(() =>
      validateConfig(
        { provider: { name: 'openai', pricing: { input: 1, output: 2, cached: 1 } } },
        'rousseau.config.ts',
      ),
    ).to.throw(/provider\.pricing/);
    expect(() => validateConfig({ provider: { name: 'openai', maxTokensField: 'max_output_tokens' } }, 'x')).to.throw(
      /provider\.maxTokensField/,
    );
    const ok = validateConfig(
      {
        provider: { name: 'openai-responses', stream: false, pricing: { input: 1, output: 2, cacheRead: 0.1 } },
        pricing: { 'local-model': { input: 0, output: 0 } },
      },
      'x',
    );
    expect(ok.provider?.name).to.equal('openai-responses');
  });
});
