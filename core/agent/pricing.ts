/**
 * What a run costs: a small table of list prices for current Anthropic and OpenAI models, which
 * the config overrides or extends (docs/agent.md, "Usage and cost"), and the cost of a usage.
 * Prices change: the table is a convenience, the config is the authority.
 */
import type { ModelPricing, Usage } from './messages.ts';

/**
 * US dollars per million tokens, standard tier, as published by each vendor (December 2026).
 * Anthropic's cache write is the 5-minute rate; OpenAI bills no cache write.
 */
export const BUILTIN_PRICING: Readonly<Record<string, ModelPricing>> = {
  'claude-opus-4-5': { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  'claude-opus-4-1': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  'claude-sonnet-4-5': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-sonnet-4': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-haiku-4-5': { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  'gpt-5': { input: 1.25, output: 10, cacheRead: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cacheRead: 0.025 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cacheRead: 0.005 },
  'gpt-4.1': { input: 2, output: 8, cacheRead: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cacheRead: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cacheRead: 0.025 },
  'gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cacheRead: 0.075 },
  o3: { input: 2, output: 8, cacheRead: 0.5 },
  'o4-mini': { input: 1.1, output: 4.4, cacheRead: 0.275 },
};

// A snapshot id (`claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`) costs what its alias does;
// any other suffix (`gpt-4.1-mini`) is another model, never priced as its prefix.
const SNAPSHOT = /-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$/;

/** The price of `model`: from `table` first (the config's), then the built-in one; undefined when unknown. */
export function pricingOf(model: string, table: Readonly<Record<string, ModelPricing>> = {}): ModelPricing | undefined {
  const alias = model.replace(SNAPSHOT, '');
  for (const name of alias === model ? [model] : [model, alias]) {
    const price = own(table, name) ?? own(BUILTIN_PRICING, name);
    if (price) return price;
  }
  return undefined;
}

// A model named `constructor` or `__proto__` must not find Object.prototype's members.
const own = (table: Readonly<Record<string, ModelPricing>>, name: string): ModelPricing | undefined =>
  Object.hasOwn(table, name) ? table[name] : undefined;

/** The cost of `usage` in US dollars. */
export function costOf(usage: Usage, price: ModelPricing): number {
  const perToken =
    usage.inputTokens * price.input +
    usage.outputTokens * price.output +
    (usage.cacheReadTokens ?? 0) * (price.cacheRead ?? price.input) +
    (usage.cacheWriteTokens ?? 0) * (price.cacheWrite ?? price.input);
  return perToken / 1_000_000;
}
