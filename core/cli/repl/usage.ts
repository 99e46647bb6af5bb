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

/** `1200 in / 30 out tokens, 800 cache read`; empty when nothing was counted. */
export function formatUsage(usage: Usage): string {
  const counts = Object.entries(usage).filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] > 0);
  if (!counts.length) return '';
  const main = `${usage.inputTokens} in / ${usage.outputTokens} out tokens`;
  const rest = counts
    .filter(([key]) => key !== 'inputTokens' && key !== 'outputTokens')
    .map(([key, n]) => `${Number.isInteger(n) ? n : n.toFixed(4)} ${LABELS[key] ?? key}`);
  return [main, ...rest].join(', ');
}

/** Usage per run of a conversation, and its total. */
export class UsageLog {
  private readonly runs: Usage[] = [];

  add(usage: Usage): void {
    this.runs.push({ ...usage });
  }

  total(): Usage {
    const total: Usage = { inputTokens: 0, outputTokens: 0 };
    for (const run of this.runs) addUsage(total, run);
    return total;
  }

  /** The `/usage` report: each prompt's run, then the session's total. */
  report(): string {
    if (!this.runs.length) return 'No model requests yet in this session.';
    const lines = this.runs.map((u, i) => `  prompt ${i + 1}: ${formatUsage(u) || 'no tokens reported'}`);
    return [...lines, `  session: ${formatUsage(this.total()) || 'no tokens reported'}`].join('\n');
  }
}
