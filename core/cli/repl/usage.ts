/**
 * Token counts as people read them. A provider reports what it knows (input and output always,
 * cache reads and writes where the API says); any other count a provider adds to `Usage` is shown
 * by its field name, so a new one appears here without a change.
 */
import { addUsage, type Usage } from '../../agent/messages.ts';

const LABELS: Record<string, string> = {
  inputTokens: 'in',
  outputTokens: 'out',
  cacheReadTokens: 'cache read',
  cacheWriteTokens: 'cache write',
};

/** `$0.0123`: cents and below stay readable. */
function formatCost(costUsd: number): string {
  return `$${costUsd >= 1 ? costUsd.toFixed(2) : costUsd.toFixed(4)}`;
}

/**
 * `1200 in / 30 out tokens, 800 cache read, $0.0042`; empty when nothing was counted. The cost is
 * shown only when the model's price is known.
 */
export function formatUsage(usage: Usage, costUsd?: number): string {
  const counts = Object.entries(usage).filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] > 0);
  if (!counts.length) return '';
  const main = `${usage.inputTokens} in / ${usage.outputTokens} out tokens`;
  const rest = counts
    .filter(([key]) => key !== 'inputTokens' && key !== 'outputTokens')
    .map(([key, n]) => `${Number.isInteger(n) ? n : n.toFixed(4)} ${LABELS[key] ?? key}`);
  return [main, ...rest, ...(costUsd === undefined ? [] : [formatCost(costUsd)])].join(', ');
}

/** Usage per run of a conversation, and its total. */
export class UsageLog {
  private readonly runs: { usage: Usage; costUsd?: number }[] = [];

  add(usage: Usage, costUsd?: number): void {
    this.runs.push({ usage: { ...usage }, ...(costUsd === undefined ? {} : { costUsd }) });
  }

  total(): Usage {
    const total: Usage = { inputTokens: 0, outputTokens: 0 };
    for (const run of this.runs) addUsage(total, run.usage);
    return total;
  }

  /** The session's cost, when every run's price was known. */
  totalCost(): number | undefined {
    if (!this.runs.length || this.runs.some((r) => r.costUsd === undefined)) return undefined;
    return this.runs.reduce((sum, r) => sum + (r.costUsd ?? 0), 0);
  }

  /** The `/usage` report: each prompt's run, then the session's total. */
  report(): string {
    if (!this.runs.length) return 'No model requests yet in this session.';
    const lines = this.runs.map(
      (r, i) => `  prompt ${i + 1}: ${formatUsage(r.usage, r.costUsd) || 'no tokens reported'}`,
    );
    return [...lines, `  session: ${formatUsage(this.total(), this.totalCost()) || 'no tokens reported'}`].join('\n');
  }
}
