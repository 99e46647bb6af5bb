// The `ctx` a tool's execute receives from the host, built by hand for direct calls in tests.
import type { PluginLogger, ToolContext } from '../../core/contract.ts';

const quiet: PluginLogger = { error() {}, warn() {}, info() {}, debug() {} };

/** `authorize` allows everything: tests of the host's policy go through a host. */
export function toolContext<Options = Record<string, unknown>>(
  workspace: string,
  options: Options = {} as Options,
  signal: AbortSignal = new AbortController().signal,
): ToolContext<Options> {
  return {
    signal,
    log: quiet,
    options,
    callId: 'test-call',
    workspace,
    progress() {},
    authorize: async () => ({ allowed: true }),
    // No user and no model here either, as in a headless run: a question is dismissed, a sample refused.
    elicit: async () => ({ action: 'cancel' }),
    sample: async () => {
      throw new Error('ctx.sample: no model can be asked here');
    },
  };
}

/** The text of a tool's output, whichever of its two shapes it has. */
export function textOf(output: unknown): string {
  return typeof output === 'string' ? output : (output as { content: string }).content;
}
