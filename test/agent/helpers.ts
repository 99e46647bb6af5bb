// A real host for agent tests: the kit fixture plugin (inline, so tests stay fast), everything
// allowed except `fail` with "forbidden" in its input, no audit file.
import { join } from 'node:path';
import { createHost, type Host } from '../../core/host.ts';
import type { AgentEvent, AgentHost } from '../../core/agent/agent.ts';
import { textOf } from '../../core/block-text.ts';
import type { ContentBlock } from '../../core/contract.ts';
import { FIXTURES, tempDir } from '../helpers.ts';

export async function kitHost(): Promise<{ host: Host; cleanup(): Promise<void> }> {
  const tmp = tempDir('rh-agent-');
  const host = await createHost({
    cwd: tmp.dir,
    config: {
      builtins: false,
      // A load that is slow because the machine is busy (files run in parallel) is not what these test.
      plugins: [{ module: join(FIXTURES, 'plugins', 'kit.ts'), isolation: 'inline', loadTimeoutMs: 60_000 }],
      policy: {
        default: 'allow',
        deny: [{ tool: 'fail', match: 'forbidden', reason: 'forbidden by the test policy' }],
      },
    },
    audit: false,
    logLevel: 'error',
  });
  return {
    host,
    async cleanup() {
      await host.close();
      tmp.cleanup();
    },
  };
}

/** Collects a run's events. */
export function recorder(): {
  events: AgentEvent[];
  onEvent(e: AgentEvent): void;
  of<T extends AgentEvent['type']>(type: T): Extract<AgentEvent, { type: T }>[];
} {
  const events: AgentEvent[] = [];
  return {
    events,
    onEvent: (e) => events.push(e),
    of: <T extends AgentEvent['type']>(type: T) =>
      events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type),
  };
}

/** A 1×1 PNG, base64. */
export const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
/** The smallest PDF the fake servers accept, base64. */
export const PDF = Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64');

/** What a tool that returns a screenshot, a PDF, audio and a link answers. */
export const RICH_BLOCKS: ContentBlock[] = [
  { type: 'text', text: 'Here it is.' },
  { type: 'image', data: PNG, mimeType: 'image/png' },
  { type: 'resource', resource: { uri: 'file:///w/report.pdf', mimeType: 'application/pdf', blob: PDF } },
  { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
  { type: 'resource', resource: { uri: 'file:///w/notes.md', mimeType: 'text/markdown', text: '# Notes' } },
  { type: 'resource_link', uri: 'file:///w/big.bin', name: 'big.bin' },
];

/**
 * `host`, with `blocks` on every `greet` result that succeeds, its text naming them: a call's
 * result the way `host.call` returns it for a tool that returned blocks (docs/plugins.md, "Results").
 */
export function withBlocks(host: AgentHost, blocks: ContentBlock[] = RICH_BLOCKS): AgentHost {
  return {
    tools: () => host.tools(),
    async call(tool, input, options) {
      const result = await host.call(tool, input, options);
      if (tool !== 'greet' || result.isError) return result;
      return { ...result, content: textOf(blocks), blocks };
    },
  };
}
