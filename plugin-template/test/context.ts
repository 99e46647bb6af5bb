// A ToolContext for calling `execute` directly, the way the host calls it, minus the host.
import type { PluginLogger, ToolContext } from 'rousseau-host';

const quiet: PluginLogger = { error() {}, warn() {}, info() {}, debug() {} };

export function toolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    signal: new AbortController().signal,
    log: quiet,
    options: {},
    callId: 'test-call',
    workspace: process.cwd(),
    progress() {},
    // No policy here: every step a tool asks about is allowed.
    authorize: async () => ({ allowed: true }),
    // No user and no model here either, as in a headless run: a question is dismissed, a sample refused.
    elicit: async () => ({ action: 'cancel' }),
    sample: async () => {
      throw new Error('ctx.sample: no model can be asked here');
    },
    ...overrides,
  };
}

/** The text of what `execute` returned, whichever of its two shapes it used. */
export function textOf(output: string | { content: string }): string {
  return typeof output === 'string' ? output : output.content;
}
