/**
 * How every benchmark section reports: each figure beside its floor, measured in the same run, and
 * the ratio. Sections live in scripts/bench/*.ts and export `run(): Promise<Row[]>`.
 */
export interface Row {
  /** What was measured. */
  name: string;
  value: number;
  unit: string;
  /** The floor it is compared with, measured in the same run. */
  floor?: { name: string; value: number };
  /** The issue's target, for the reader. */
  target?: string;
  /**
   * The ratio to the floor when the section works it out itself (the median of per-round ratios,
   * steadier on a shared machine than the ratio of two medians); else value ÷ floor.
   */
  ratio?: number;
}

export function formatRows(title: string, rows: Row[]): string {
  const lines = [`\n## ${title}`];
  for (const r of rows) {
    const ratio = r.floor
      ? `  ×${(r.ratio ?? r.value / r.floor.value).toFixed(2)}${r.ratio === undefined ? '' : ' per round'} of ${r.floor.name} (${fmt(r.floor.value)} ${r.unit})`
      : '';
    lines.push(
      `  ${r.name.padEnd(52)} ${fmt(r.value).padStart(10)} ${r.unit}${ratio}${r.target ? `  [target ${r.target}]` : ''}`,
    );
  }
  return lines.join('\n');
}

function fmt(n: number): string {
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}

/** Median and p99 of samples. */
export function stats(samples: number[]): { median: number; p99: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)]!, p99: s[Math.min(s.length - 1, Math.floor(s.length * 0.99))]! };
}
