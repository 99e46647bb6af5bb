/**
 * A provider from settings (the config's `provider` key, or the CLI's flags), and the one the
 * environment implies when nothing is configured.
 */
import { resolve } from 'node:path';
import type { HostConfig } from '../../config-schema.ts';
import type { Logger } from '../../log.ts';
import type { ModelPricing, Provider } from '../messages.ts';
import { anthropicProvider } from './anthropic.ts';
import { openaiProvider } from './openai.ts';
import { openaiResponsesProvider } from './openai-responses.ts';
import { replayProvider } from './replay.ts';

export type ProviderSettings = NonNullable<HostConfig['provider']>;
export const PROVIDER_NAMES = ['anthropic', 'openai', 'openai-responses', 'replay'] as const;

export interface CreateProviderOptions {
  /** Resolves a replay file. */
  dir?: string;
  log?: Logger;
  /** Model prices by model id (the config's top-level `pricing`), over the built-in table. */
  prices?: Readonly<Record<string, ModelPricing>>;
}

/** Builds the provider. Throws `ProviderError` (`no_api_key`) when its key is missing. */
export function createProvider(settings: ProviderSettings, options: CreateProviderOptions = {}): Provider {
  const common = {
    ...(settings.model ? { model: settings.model } : {}),
    ...(settings.baseUrl ? { baseUrl: settings.baseUrl } : {}),
    ...(settings.maxTokens ? { maxTokens: settings.maxTokens } : {}),
    ...(settings.timeoutMs ? { timeoutMs: settings.timeoutMs } : {}),
    ...(settings.retries !== undefined ? { retries: settings.retries } : {}),
    ...(options.log ? { log: options.log } : {}),
    ...(settings.pricing ? { pricing: settings.pricing } : {}),
    ...(options.prices ? { prices: options.prices } : {}),
  };
  switch (settings.name) {
    case 'anthropic':
      return anthropicProvider(common);
    case 'openai':
      return openaiProvider({
        ...common,
        ...(settings.maxTokensField ? { maxTokensField: settings.maxTokensField } : {}),
      });
    case 'openai-responses':
      return openaiResponsesProvider({
        ...common,
        ...(settings.stream !== undefined ? { stream: settings.stream } : {}),
      });
    case 'replay':
      return replayProvider({
        ...(settings.file ? { file: resolve(options.dir ?? process.cwd(), settings.file) } : {}),
        ...(settings.pricing ? { pricing: settings.pricing } : {}),
      });
  }
}

/** The provider an API key in the environment implies: Anthropic first, then OpenAI (or a base URL alone, for a local server). */
export function providerFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): ProviderSettings | undefined {
  if (env.ANTHROPIC_API_KEY) return { name: 'anthropic' };
  if (env.OPENAI_API_KEY || env.OPENAI_BASE_URL) return { name: 'openai' };
  return undefined;
}

export { anthropicProvider, openaiProvider, openaiResponsesProvider, replayProvider };
