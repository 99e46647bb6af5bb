/**
 * Agent loop figures: the host's overhead per agent turn of 10 tool calls, with no model
 * latency (the replay provider answers at once). Floor, from the same run: the same 10 calls issued
 * straight to `host.call()` at once. The difference is what the loop adds per turn: events, the
 * tool projection, history, the provider round trip, and the closing answer turn.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, createHost, replayProvider, type ReplayScript } from '../../core/index.ts';
import { stats, type Row } from './report.ts';

const CALLS = 10;

export async function run(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rh-bench-agent-'));
  const file = join(dir, 'echo.mjs');
  writeFileSync(
    file,
    `export default { name: 'echo', version: '1.0.0', tools: [{ name: 'echo', description: 'Echo.', annotations: { readOnly: true }, inputSchema: { type: 'object', properties: { text: { type: 'string', description: 'Text.' } }, required: ['text'], additionalProperties: false }, execute: async ({ text }) => text }] };`,
  );
  const host = await createHost({
    cwd: dir,
    audit: false,
    logLevel: 'error',
    config: { builtins: false, plugins: [{ module: file, isolation: 'inline' }] },
  });
  const script: ReplayScript = {
    turns: [
      { toolCalls: Array.from({ length: CALLS }, (_, i) => ({ name: 'echo', input: { text: `call ${i}` } })) },
      { text: 'done' },
    ],
  };
  const inputs = Array.from({ length: CALLS }, (_, i) => JSON.stringify({ text: `call ${i}` }));

  const variants: Record<string, () => Promise<unknown>> = {
    calls: () => Promise.all(inputs.map((input) => host.call('echo', input))),
    agent: async () => {
      const result = await new Agent({ host, provider: replayProvider({ script }) }).run('go');
      if (result.stopReason !== 'end_turn') throw new Error(`bench run ended ${result.stopReason}`);
    },
  };
  const samples: Record<string, number[]> = { calls: [], agent: [] };
  const rounds = (n: number, batch: number, keep: boolean) =>
    (async () => {
      for (let r = 0; r < n; r++) {
        for (const [name, fn] of Object.entries(variants)) {
          const t0 = process.hrtime.bigint();
          for (let i = 0; i < batch; i++) await fn();
          if (keep) samples[name]!.push(Number(process.hrtime.bigint() - t0) / batch / 1000);
        }
      }
    })();
  await rounds(20, 50, false); // warm-up
  await rounds(100, 50, true);
  await host.close();
  rmSync(dir, { recursive: true, force: true });

  const calls = stats(samples.calls!);
  const agent = stats(samples.agent!);
  return [
    { name: `${CALLS} concurrent host.call(): median`, value: calls.median, unit: 'µs' },
    {
      name: `agent run, 1 turn of ${CALLS} calls + answer: median`,
      value: agent.median,
      unit: 'µs',
      floor: { name: `${CALLS} calls`, value: calls.median },
    },
    { name: `agent run, 1 turn of ${CALLS} calls + answer: p99`, value: agent.p99, unit: 'µs' },
    {
      name: `loop overhead per ${CALLS}-call turn (run − calls): median`,
      value: agent.median - calls.median,
      unit: 'µs',
      target: '≪ model latency (~1 s)',
    },
  ];
}
