/**
 * Process isolation figures (`isolation: 'process'`), each beside its floor from the same run, all
 * from the bundle (dist/):
 * - round trip of a process-isolated echo call through `host.call()` vs a raw IPC round trip to a
 *   bare child process (same serialisation), one of each in turn, per-call samples;
 * - start-up: spawn → plugin loaded and reported, vs spawn → first IPC message of a bare child;
 * - memory: RSS of a plugin's process, loaded from jiti's warm cache, vs an idle bare child (both count
 *   the node binary's shared pages; the difference is what a plugin process adds).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stats, type Row } from './report.ts';
import { echoClient, roundTripSamples } from './round-trip.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIST_INDEX = pathToFileURL(join(ROOT, 'dist', 'index.js')).href;
const BARE_ECHO = "process.on('message', (m) => process.send(m));";

type Api = typeof import('../../core/index.ts');

export async function run(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rh-bench-process-'));
  try {
    writeFileSync(join(dir, 'echo.ts'), ECHO_PLUGIN);
    return [...(await roundTrip(dir)), ...(await startup(dir))];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ECHO_PLUGIN = `import Type from 'typebox';
export default {
  name: 'echo',
  version: '1.0.0',
  tools: [
    { name: 'echo', description: 'Echo the text back.', inputSchema: Type.Object({ text: Type.String({ description: 'Text.' }) }), execute: ({ text }: { text: string }) => text },
    { name: 'pid', description: 'The pid of the process the plugin runs in.', inputSchema: Type.Object({}), execute: () => String(process.pid) },
  ],
};
`;

/** A bare child that echoes over IPC, as the runner starts its processes (advanced serialisation). */
async function bareChild(): Promise<{ child: ChildProcess; call(message: unknown): Promise<unknown>; close(): void }> {
  const child = spawn(process.execPath, ['-e', BARE_ECHO], {
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const call = echoClient(
    (m) => child.send(m),
    (listener) => child.on('message', listener),
  );
  await call('up');
  return { child, call, close: () => void child.kill('SIGKILL') };
}

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

/** A host from the built package with the echo plugin in a process of its own, audit off. */
async function echoHost(dir: string) {
  const { createHost } = (await import(DIST_INDEX)) as Api;
  return createHost({
    cwd: dir,
    audit: false,
    logLevel: 'error',
    config: {
      builtins: false,
      policy: { default: 'allow' },
      plugins: [{ module: './echo.ts', isolation: 'process', loadTimeoutMs: 120_000 }],
    },
  });
}

async function roundTrip(dir: string): Promise<Row[]> {
  const host = await echoHost(dir);
  const bare = await bareChild();
  const input = { text: 'hello' };
  const variants: Record<string, () => Promise<unknown>> = {
    host: () => host.call('echo', input),
    raw: () => bare.call({ tool: 'echo', input }),
  };
  // One raw round trip, then one host.call, in turn: both see the machine at the same moment.
  const samples = await roundTripSamples(variants, 3_000, 1, 500);
  const check = await host.call('echo', input);
  if (check.isError) throw new Error(`bench: the echo call failed: ${check.content}`);
  await host.close();
  bare.close();

  const h = stats(samples.host!);
  const r = stats(samples.raw!);
  return [
    {
      name: 'process echo via host.call, p50',
      value: h.median,
      unit: 'µs',
      floor: { name: 'raw IPC p50', value: r.median },
    },
    { name: 'process echo via host.call, p99', value: h.p99, unit: 'µs', floor: { name: 'raw IPC p99', value: r.p99 } },
  ];
}

async function startup(dir: string): Promise<Row[]> {
  const plugin: number[] = [];
  const bare: number[] = [];
  let memory = { plugin: 0, bare: 0 };
  for (let i = 0; i < 8; i++) {
    const t0 = performance.now();
    const child = await bareChild();
    bare.push(performance.now() - t0);
    const host = await echoHost(dir);
    const [status] = host.plugins();
    if (status?.status !== 'loaded') throw new Error(`bench: echo did not load: ${status?.error?.message}`);
    plugin.push(status.loadMs!);
    if (i === 7) {
      const pid = await host.call('pid', {});
      if (pid.isError) throw new Error(`bench: the pid call failed: ${pid.content}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      memory = { plugin: rssMiB(Number(pid.content)), bare: rssMiB(child.child.pid!) };
    }
    child.close();
    await host.close();
  }
  // The first starts compile and fill jiti's cache; the memory is the last, warm one.
  return [
    {
      name: 'process start: spawn → plugin loaded, p50',
      value: stats(plugin.slice(2)).median,
      unit: 'ms',
      floor: { name: 'bare child → first message', value: stats(bare.slice(2)).median },
    },
    {
      name: 'memory of a plugin process (RSS, warm cache)',
      value: memory.plugin,
      unit: 'MiB',
      floor: { name: 'idle bare child', value: memory.bare },
    },
  ];
}
