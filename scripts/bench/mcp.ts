/**
 * MCP figures (issue 8), beside the floor from the same run: one `tools/call` of an echo tool from
 * the SDK's client through `rousseau-host start --mcp` (the built bin: validation, policy, limiter,
 * timeout, output cap, audit; inline or worker isolation) vs the SDK's bare low-level `Server`
 * echoing over stdio. Same client code, same message; every server is measured in each round, so
 * machine noise lands on all of them.
 *
 * Two figures per server: the sequential round trip (median of per-round medians; on a 2-vCPU box
 * it swings with vCPU wake-ups) and the server process's CPU time per call with 16 calls in flight
 * (from /proc, the stable one). "audit off" shows what the audit trail costs on its own.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { stats, type Row } from './report.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'rousseau-host.js');
const ECHO_PLUGIN = join(ROOT, 'test', 'fixtures', 'plugins', 'echo.ts');
const BARE = join(ROOT, 'test', 'fixtures', 'mcp', 'bare-echo.mjs');

const ROUNDS = 6;
const SEQUENTIAL = 300;
const IN_FLIGHT = 16;
const CONCURRENT = 2000;

interface Server {
  label: string;
  client: Client;
  pid: number;
}

export async function run(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rh-bench-mcp-'));
  const host = (name: string, isolation: string, audit: boolean) => {
    const file = join(dir, `${name}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        builtins: false,
        plugins: [{ module: ECHO_PLUGIN, isolation }],
        log: { audit: audit ? join(dir, `${name}.jsonl`) : false },
      }),
    );
    return [BIN, 'start', '--mcp', '--config', file];
  };
  const servers = [
    await connect('bare SDK Server', [BARE]),
    await connect('start --mcp, inline plugin', host('inline', 'inline', true)),
    await connect('start --mcp, inline plugin, audit off', host('inline-noaudit', 'inline', false)),
    await connect('start --mcp, worker plugin', host('worker', 'worker', true)),
  ];
  try {
    for (const s of servers) {
      const r = await echo(s.client);
      if (r !== 'hello') throw new Error(`bench: ${s.label} answered ${JSON.stringify(r)}`);
    }
    await rounds(servers, 1); // warm-up: JIT, the worker, the audit file
    const { seq, cpu } = await rounds(servers, ROUNDS);

    const [bare, ...ours] = servers;
    const rows: Row[] = [];
    const seqFloor = { name: 'bare', value: stats(seq.get(bare!)!).median };
    rows.push({ name: `round trip, ${bare!.label}`, value: seqFloor.value, unit: 'µs' });
    for (const s of ours)
      rows.push({
        name: `round trip, ${s.label}`,
        value: stats(seq.get(s)!).median,
        unit: 'µs',
        floor: seqFloor,
        ...(s === ours[0] ? { target: '≤ ×1.2' } : {}),
      });
    if (cpu.size) {
      const cpuFloor = { name: 'bare', value: stats(cpu.get(bare!)!).median };
      rows.push({
        name: `server CPU per call (${IN_FLIGHT} in flight), ${bare!.label}`,
        value: cpuFloor.value,
        unit: 'µs',
      });
      for (const s of ours)
        rows.push({
          name: `server CPU per call, ${s.label}`,
          value: stats(cpu.get(s)!).median,
          unit: 'µs',
          floor: cpuFloor,
        });
    }
    return rows;
  } finally {
    await Promise.all(servers.map((s) => s.client.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function connect(label: string, args: string[]): Promise<Server> {
  const transport = new StdioClientTransport({ command: process.execPath, args, cwd: ROOT, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  return { label, client, pid: transport.pid! };
}

async function echo(client: Client): Promise<string> {
  const r = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
  return (r.content as { text: string }[])[0]!.text;
}

/** User + system CPU of a process, in µs (Linux /proc; clock ticks of 10 ms, so batches must be long). */
function cpuMicros(pid: number): number | undefined {
  const file = `/proc/${pid}/stat`;
  if (!existsSync(file)) return undefined;
  const fields = readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Each round, every server in turn: sequential calls (their median, µs), then a batch in flight (server CPU µs per call). */
async function rounds(
  servers: Server[],
  n: number,
): Promise<{ seq: Map<Server, number[]>; cpu: Map<Server, number[]> }> {
  const seq = new Map<Server, number[]>();
  const cpu = new Map<Server, number[]>();
  for (let r = 0; r < n; r++) {
    for (const s of servers) {
      const samples: number[] = [];
      for (let i = 0; i < SEQUENTIAL; i++) {
        const t0 = performance.now();
        await echo(s.client);
        samples.push((performance.now() - t0) * 1000);
      }
      seq.set(s, [...(seq.get(s) ?? []), stats(samples).median]);

      const before = cpuMicros(s.pid);
      let next = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next++ < CONCURRENT) await echo(s.client);
        }),
      );
      const after = cpuMicros(s.pid);
      if (before !== undefined && after !== undefined)
        cpu.set(s, [...(cpu.get(s) ?? []), (after - before) / CONCURRENT]);
    }
  }
  return { seq, cpu };
}
