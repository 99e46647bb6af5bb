// A real host for agent tests: the kit fixture plugin (inline, so tests stay fast), everything
// allowed except `fail` with "forbidden" in its input, no audit file.
import { join } from 'node:path';
import { createHost, type Host } from '../../core/host.ts';
import type { AgentEvent } from '../../core/agent/agent.ts';
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
