/**
 * `npm run bench`: every figure beside its floor, measured in the same run. Sections run one after
 * another (never concurrently: they would measure each other). `npm run bench -- core` runs one.
 */
import { formatRows, type Row } from './bench/report.ts';

const SECTIONS: Record<string, () => Promise<{ run(): Promise<Row[]> }>> = {
  core: () => import('./bench/core.ts'),
  agent: () => import('./bench/agent.ts'),
  mcp: () => import('./bench/mcp.ts'),
  policy: () => import('./bench/policy.ts'),
  worker: () => import('./bench/worker.ts'),
  process: () => import('./bench/process.ts'),
  startup: () => import('./bench/startup.ts'),
};

const only = process.argv.slice(2);
for (const [name, load] of Object.entries(SECTIONS)) {
  if (only.length && !only.includes(name)) continue;
  const rows = await (await load()).run();
  process.stdout.write(`${formatRows(name, rows)}\n`);
}
