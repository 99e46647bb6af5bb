/**
 * A provider from settings (the config's `provider` key, or the CLI's flags), and the one the
 * environment implies when nothing is configured.
 */
import { resolve } from 'node:path';
import type { HostConfig } from '../../config-schema.ts';
import type { Logger } from '../../log.ts';
import type { Provider } from '../messages.ts';
import { anthropicProvider } from './anthropic.ts';
import { openaiProvider } from './openai.ts';
import { replayProvider } from './replay.ts';

export type ProviderSettings = NonNullable<HostConfig['provider']>;
export const PROVIDER_NAMES = ['anthropic', 'openai', 'replay'] as const;

/** Builds the provider; `dir` resolves a replay file. Throws `ProviderError` (`no_api_key`) when its key is missing. */
export function createProvider(settings: ProviderSettings, options: { dir?: string; log?: Logger } = {}): Provider {
  const common = {
    ...(settings.model ? { model: settings.model } : {}),
    ...(settings.baseUrl ? { baseUrl: settings.baseUrl } : {}),
    ...(settings.maxTokens ? { maxTokens: settings.maxTokens } : {}),
    ...(settings.timeoutMs ? { timeoutMs: settings.timeoutMs } : {}),
    ...(settings.retries !== undefined ? { retries: settings.retries } : {}),
    ...(options.log ? { log: options.log } : {}),
  };
  switch (settings.name) {
    case 'anthropic':
      return anthropicProvider(common);
    case 'openai':
      return openaiProvider(common);
    case 'replay':
      return replayProvider(settings.file ? { file: resolve(options.dir ?? process.cwd(), settings.file) } : {});
  }
}

/** The provider an API key in the environment implies: Anthropic first, then OpenAI (or a base URL alone, for a local server). */
export function providerFromEnv(env: NodeJS.ProcessEnv = process.env): ProviderSettings | undefined {
  if (env.ANTHROPIC_API_KEY) return { name: 'anthropic' };
  if (env.OPENAI_API_KEY || env.OPENAI_BASE_URL) return { name: 'openai' };
  return undefined;
}

export { anthropicProvider, openaiProvider, replayProvider };
