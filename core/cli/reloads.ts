/**
 * What a reload changed, said on stderr: `start --watch`'s notices (the MCP server's and the agent's)
 * and the REPL's `/reload`.
 */
import type { Host } from '../host.ts';
import type { PluginStatus, ToolInfo } from '../types.ts';
import { watchPlugins } from '../watch.ts';
import { printError } from './command.ts';

/** `--watch`: reloads each plugin loaded from a file when its files change, and says what changed on stderr. */
export function startWatching(host: Host, notice: (line: string) => void = printError): () => void {
  let known = host.tools();
  const watching = watchPlugins(host, {
    onReload: (statuses) => {
      for (const line of describeReload(statuses, known, host.tools())) notice(line);
      known = host.tools();
    },
  });
  for (const [source, root] of watching.roots) printError(`rousseau-host: watching ${root} for ${source}`);
  return watching.stop;
}

/**
 * One line per plugin a reload went through: which tools it added, changed or removed, or that the
 * previous version still serves (the reason was logged as a warning just before).
 */
export function describeReload(
  statuses: readonly PluginStatus[],
  before: readonly ToolInfo[],
  after: readonly ToolInfo[],
): string[] {
  return statuses.map((status) => {
    if (status.reloadError) return `${status.name}: the reload failed; the previous version still serves`;
    if (status.status === 'failed') return `${status.name}: still failing, nothing of it is served`;
    const was = new Map(before.filter((t) => t.plugin === status.name).map((t) => [t.name, JSON.stringify(t)]));
    const now = after.filter((t) => t.plugin === status.name);
    const changes = [
      ...now.filter((t) => !was.has(t.name)).map((t) => `+${t.name}`),
      ...now.filter((t) => was.has(t.name) && was.get(t.name) !== JSON.stringify(t)).map((t) => `~${t.name}`),
      ...[...was.keys()].filter((name) => !now.some((t) => t.name === name)).map((name) => `-${name}`),
    ];
    return `reloaded ${status.name}: ${changes.length ? changes.join(' ') : 'same tools'}`;
  });
}
