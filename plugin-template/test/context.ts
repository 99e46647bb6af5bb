// A ToolContext for calling `execute` directly, the way the host calls it, minus the host.
import type { PluginLogger, ToolContext, ToolOutput } from 'rousseau-host';

const quiet: PluginLogger = { error() {}, warn() {}, info() {}, debug() {} };

/**
 * A tool made with `defineToolFor(Options)` reads `ctx.options` typed from the schema, so its tests
 * pass the options it reads: `toolContext({ options: { maxBytes: 256 } })` (with every field the
 * type requires; the host would have filled in the defaults).
 */
export function toolContext<Options>(
  overrides: Partial<ToolContext<Options>> & { options: Options },
): ToolContext<Options>;
export function toolContext(overrides?: Partial<ToolContext>): ToolContext;
export function toolContext(overrides: Partial<ToolContext<unknown>> = {}): ToolContext<unknown> {
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

/** The text of what `execute` returned, whichever of its shapes it used (a string, or text blocks). */
export function textOf(output: ToolOutput): string {
  if (typeof output === 'string') return output;
  if (typeof output.content === 'string') return output.content;
  return output.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
}
