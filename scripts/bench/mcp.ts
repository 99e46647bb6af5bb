/**
 * MCP figures, beside two floors from the same run: one `tools/call` of an echo tool from the SDK's
 * client through `rousseau-host start --mcp` (the built bin: validation, policy, limiter, timeout,
 * output cap, audit; inline or worker isolation) vs the SDK's bare low-level `Server` echoing over
 * stdio (the floor) and the SDK's high-level `McpServer` (what a server written with the SDK
 * costs). Same client code, same message; every server is measured in each round, so machine noise
 * lands on all of them.
 *
 * Three figures per server: the sequential round trip (p50), the throughput with 16 calls in
 * flight, and the server process's CPU time per call in that batch (its threads' run time from /proc, the stable one).
 * "audit off" shows what the audit trail costs on its own.
 *
 * The method, for steadiness on a shared 2-vCPU machine whose load swings more than the servers
 * differ: the sequential calls are interleaved call by call (one call to each server in turn, the
 * first server rotating), so every server sees the machine at the same moments; each of ROUNDS
 * rounds gives each server its median, and a ratio is the median over rounds of that round's ratio
 * (printed "per round"), the value the median of the rounds' medians. Throughput and CPU, measured
 * in a batch per server, take their ratios per round the same way.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

const ROUNDS = 10;
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
    const rows: Row[] = [];
    /** A row for `s` from per-round figures: the median of its rounds, and of its per-round ratios to `base`. */
    const row = (
      name: string,
      m: Map<Server, number[]>,
      s: Server,
      unit: string,
      base?: Server,
      target?: string,
    ): Row => {
      const value = stats(m.get(s)!).median;
      if (!base) return { name, value, unit };
      const b = m.get(base)!;
      const ratio = stats(m.get(s)!.map((v, r) => v / b[r]!)).median;
      return {
        name,
        value,
        unit,
        floor: { name: base.label, value: stats(b).median },
        ratio,
        ...(target ? { target } : {}),
      };
    };
    rows.push(row(`round trip p50, ${floor.label}`, seq, floor, 'µs'));
    rows.push(row(`round trip p50, ${sdk.label}`, seq, sdk, 'µs', floor));
    rows.push(row(`round trip p50, ${host.label}`, seq, host, 'µs', sdk, '≤ ×1.0'));
    for (const s of ours)
      rows.push(row(`round trip p50, ${s.label}`, seq, s, 'µs', floor, s === host ? '≤ ×1.1' : undefined));
    rows.push(row(`throughput (${IN_FLIGHT} in flight), ${floor.label}`, rate, floor, 'calls/s'));
    rows.push(row(`throughput, ${sdk.label}`, rate, sdk, 'calls/s', floor));
    rows.push(row(`throughput, ${host.label}`, rate, host, 'calls/s', sdk, '≥ ×1.0'));
    for (const s of ours) rows.push(row(`throughput, ${s.label}`, rate, s, 'calls/s', floor));
    if (cpu.size) {
      rows.push(row(`server CPU per call (${IN_FLIGHT} in flight), ${floor.label}`, cpu, floor, 'µs'));
      for (const s of [sdk, ...ours]) rows.push(row(`server CPU per call, ${s.label}`, cpu, s, 'µs', floor));
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

/**
 * CPU time of a process's threads so far, in µs (Linux: each thread's run time in ns from
 * /proc/<pid>/task/<tid>/schedstat). /proc/<pid>/stat counts in 10 ms ticks, a few ticks per batch.
 */
function cpuMicros(pid: number): number | undefined {
  const tasks = `/proc/${pid}/task`;
  if (!existsSync(tasks)) return undefined;
  let ns = 0;
  for (const tid of readdirSync(tasks)) {
    try {
      ns += Number(readFileSync(`${tasks}/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that ended between the listing and the read: its time is gone with it either way.
    }
  }
  return ns / 1000;
}

/**
 * Each round: sequential calls interleaved call by call across the servers (each server's median,
 * µs), then for each server in turn a batch in flight (calls per second, and server CPU µs per call).
 */
async function rounds(
  servers: Server[],
  n: number,
): Promise<{ seq: Map<Server, number[]>; cpu: Map<Server, number[]>; rate: Map<Server, number[]> }> {
  const seq = new Map<Server, number[]>(servers.map((s) => [s, []]));
  const cpu = new Map<Server, number[]>();
  const rate = new Map<Server, number[]>(servers.map((s) => [s, []]));
  for (let r = 0; r < n; r++) {
    const samples = servers.map((): number[] => []);
    for (let i = 0; i < SEQUENTIAL; i++) {
      for (let j = 0; j < servers.length; j++) {
        const k = (i + j) % servers.length;
        const t0 = performance.now();
        await echo(servers[k]!.client);
        samples[k]!.push((performance.now() - t0) * 1000);
      }
    }
    for (const [k, s] of servers.entries()) seq.get(s)!.push(stats(samples[k]!).median);

    for (const s of servers) {
      const before = cpuMicros(s.pid);
      const started = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next++ < CONCURRENT) await echo(s.client);
        }),
      );
      rate.get(s)!.push(CONCURRENT / ((performance.now() - started) / 1000));
      const after = cpuMicros(s.pid);
      if (before !== undefined && after !== undefined)
        cpu.set(s, [...(cpu.get(s) ?? []), (after - before) / CONCURRENT]);
    }
  }
  return { seq, cpu, rate };
}
