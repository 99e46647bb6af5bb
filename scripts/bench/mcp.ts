/**
 * MCP figures, beside two floors from the same run: one `tools/call` of an echo tool from the SDK's
 * client through `rousseau-host start --mcp` (the built bin: validation, policy, limiter, timeout,
 * output cap, audit; inline or worker isolation) vs the SDK's bare low-level `Server` echoing over
 * stdio (the floor) and the SDK's high-level `McpServer` (what a server written with the SDK
 * costs). Same client code, same message; every server is measured in each round, so machine noise
 * lands on all of them.
 *
 * Three figures per server: the sequential round trip (p50: median of per-round medians; on a
 * 2-vCPU box it swings with vCPU wake-ups), the throughput with 16 calls in flight, and the server
 * process's CPU time per call in that batch (from /proc, the stable one). "audit off" shows what
 * the audit trail costs on its own.
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
const BARE_MCP_SERVER = join(ROOT, 'test', 'fixtures', 'mcp', 'bare-mcp-server.mjs');

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
    await connect('bare SDK McpServer', [BARE_MCP_SERVER]),
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
    const { seq, cpu, rate } = await rounds(servers, ROUNDS);

    const [floor, sdk, ...ours] = servers as [Server, Server, ...Server[]];
    const host = ours[0]!;
    const median = (m: Map<Server, number[]>, s: Server) => stats(m.get(s)!).median;
    const rows: Row[] = [];
    const seqFloor = { name: floor.label, value: median(seq, floor) };
    const seqSdk = { name: sdk.label, value: median(seq, sdk) };
    rows.push({ name: `round trip p50, ${floor.label}`, value: seqFloor.value, unit: 'µs' });
    rows.push({ name: `round trip p50, ${sdk.label}`, value: seqSdk.value, unit: 'µs', floor: seqFloor });
    rows.push({
      name: `round trip p50, ${host.label}`,
      value: median(seq, host),
      unit: 'µs',
      floor: seqSdk,
      target: '≤ ×1.0',
    });
    for (const s of ours)
      rows.push({
        name: `round trip p50, ${s.label}`,
        value: median(seq, s),
        unit: 'µs',
        floor: seqFloor,
        ...(s === host ? { target: '≤ ×1.1' } : {}),
      });
    const rateFloor = { name: floor.label, value: median(rate, floor) };
    const rateSdk = { name: sdk.label, value: median(rate, sdk) };
    rows.push({ name: `throughput (${IN_FLIGHT} in flight), ${floor.label}`, value: rateFloor.value, unit: 'calls/s' });
    rows.push({ name: `throughput, ${sdk.label}`, value: rateSdk.value, unit: 'calls/s', floor: rateFloor });
    rows.push({
      name: `throughput, ${host.label}`,
      value: median(rate, host),
      unit: 'calls/s',
      floor: rateSdk,
      target: '≥ ×1.0',
    });
    for (const s of ours)
      rows.push({ name: `throughput, ${s.label}`, value: median(rate, s), unit: 'calls/s', floor: rateFloor });
    if (cpu.size) {
      const cpuFloor = { name: floor.label, value: median(cpu, floor) };
      rows.push({
        name: `server CPU per call (${IN_FLIGHT} in flight), ${floor.label}`,
        value: cpuFloor.value,
        unit: 'µs',
      });
      for (const s of [sdk, ...ours])
        rows.push({ name: `server CPU per call, ${s.label}`, value: median(cpu, s), unit: 'µs', floor: cpuFloor });
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

/**
 * Each round, every server in turn: sequential calls (their median, µs), then a batch in flight
 * (calls per second, and server CPU µs per call).
 */
async function rounds(
  servers: Server[],
  n: number,
): Promise<{ seq: Map<Server, number[]>; cpu: Map<Server, number[]>; rate: Map<Server, number[]> }> {
  const seq = new Map<Server, number[]>();
  const cpu = new Map<Server, number[]>();
  const rate = new Map<Server, number[]>();
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
      const started = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next++ < CONCURRENT) await echo(s.client);
        }),
      );
      rate.set(s, [...(rate.get(s) ?? []), CONCURRENT / ((performance.now() - started) / 1000)]);
      const after = cpuMicros(s.pid);
      if (before !== undefined && after !== undefined)
        cpu.set(s, [...(cpu.get(s) ?? []), (after - before) / CONCURRENT]);
    }
  }
  return { seq, cpu, rate };
}
