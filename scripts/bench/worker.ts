/**
 * Worker isolation figures, each beside its floor from the same run, all from the bundle
 * (dist/), as the CLI runs it:
 * - round trip of a worker-isolated echo call through `host.call()` vs a raw `postMessage` round trip
 *   to a bare worker, one of each in turn (per-call samples), with the audit trail off and on (the
 *   default); and CPU per call with 32 in flight;
 * - start-up: spawn → plugin loaded and reported, vs spawn → first message of a bare worker;
 * - memory per isolated plugin: RSS added by 10 loaded echo plugins (jiti cache cold, then warm) vs
 *   10 idle bare workers, each measured in a fresh process (warm: median of 3); then on Node 22.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { node22 } from '../node22.ts';
import { stats, type Row } from './report.ts';
import { echoClient, roundTripSamples } from './round-trip.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIST_INDEX = pathToFileURL(join(ROOT, 'dist', 'index.js')).href;
const BARE_ECHO =
  "require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m));";
const IN_FLIGHT = 32; // the default maxConcurrency: more would only queue in the host
const MEMORY_PLUGINS = 10;

type Api = typeof import('../../core/index.ts');
type Host = Awaited<ReturnType<Api['createHost']>>;

export async function run(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rh-bench-worker-'));
  try {
    for (let i = 0; i < MEMORY_PLUGINS; i++) writeFileSync(join(dir, `echo-${i}.ts`), echoPlugin(`echo-${i}`));
    return [...(await roundTrip(dir)), ...(await startup(dir)), ...memory(dir), ...memoryOnNode22(dir)];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A typical plugin: TypeScript, typebox for its schema. */
function echoPlugin(name: string): string {
  return `import Type from 'typebox';
export default {
  name: '${name}',
  version: '1.0.0',
  tools: [{
    name: '${name.replace('-', '_')}',
    description: 'Echo the text back.',
    annotations: { readOnly: true },
    inputSchema: Type.Object({ text: Type.String({ description: 'Text.' }) }, { additionalProperties: false }),
    execute: ({ text }: { text: string }) => text,
  }],
};
`;
}

/** A bare worker that echoes. */
async function bareWorker(): Promise<{ call(message: unknown): Promise<unknown>; close(): Promise<number> }> {
  const worker = new Worker(BARE_ECHO, { eval: true, execArgv: [] }); // as the runner starts its workers
  const call = echoClient(
    (m) => worker.postMessage(m),
    (listener) => worker.on('message', listener),
  );
  await call('up');
  return { call, close: () => worker.terminate() };
}

async function roundTrip(dir: string): Promise<Row[]> {
  const bare = await bareWorker();
  const raw = () => bare.call({ tool: 'echo', input: { text: 'hello' } });
  const input = { text: 'hello' };
  const rows: Row[] = [];
  const hosts: Host[] = [];
  for (const audit of [false, true]) {
    const host = await echoHost(dir, audit);
    hosts.push(host);
    const check = await host.call('echo_0', input);
    if (check.isError) throw new Error(`bench: the echo call failed: ${check.content}`);
    // One raw round trip, then one host.call, in turn: both see the machine at the same moment.
    const samples = await roundTripSamples({ host: () => host.call('echo_0', input), raw }, 8_000, 1, 1_000);
    const h = stats(samples.host!);
    const r = stats(samples.raw!);
    rows.push(
      {
        name: `worker echo via host.call, p50, ${audit ? 'audit on (default)' : 'audit off'}`,
        value: h.median,
        unit: 'µs',
        floor: { name: 'raw postMessage p50', value: r.median },
        target: '≤ 1.5× raw',
      },
      { name: '  the same, p99', value: h.p99, unit: 'µs', floor: { name: 'raw postMessage p99', value: r.p99 } },
    );
  }
  // Last: 40,000 calls leave garbage and a long audit file that the round trips above should not pay for.
  rows.push(await cpuPerCall(hosts[0]!, raw));
  await Promise.all(hosts.map((host) => host.close()));
  await bare.close();
  return rows;
}

/** A host with one worker-isolated echo plugin; the audit trail off, or where the default config writes it. */
async function echoHost(dir: string, audit: boolean): Promise<Host> {
  const { createHost } = (await import(DIST_INDEX)) as Api;
  return createHost({
    cwd: dir,
    ...(audit ? {} : { audit: false }),
    logLevel: 'error',
    config: {
      builtins: false,
      policy: { default: 'allow' },
      plugins: [{ module: './echo-0.ts', loadTimeoutMs: 120_000 }],
    },
  });
}

/** CPU of the whole process (host thread and worker thread) per call, with IN_FLIGHT calls at a time. */
async function cpuPerCall(host: Host, raw: () => Promise<unknown>): Promise<Row> {
  const input = { text: 'hello' };
  const cpu: Record<string, number> = {};
  for (const [name, call] of Object.entries({ host: () => host.call('echo_0', input), raw })) {
    const calls = 20_000;
    let left = calls;
    const before = process.cpuUsage();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (left-- > 0) await call();
      }),
    );
    const used = process.cpuUsage(before);
    cpu[name] = (used.user + used.system) / calls;
  }
  return {
    name: `CPU per call, ${IN_FLIGHT} in flight (both threads)`,
    value: cpu.host!,
    unit: 'µs',
    floor: { name: 'raw postMessage', value: cpu.raw! },
  };
}

async function startup(dir: string): Promise<Row[]> {
  const { createHost } = (await import(DIST_INDEX)) as Api;
  const plugin: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < 12; i++) {
    const t0 = performance.now();
    const worker = await bareWorker();
    bare.push(performance.now() - t0);
    await worker.close();
    const host = await createHost({
      cwd: dir,
      audit: false,
      logLevel: 'error',
      config: { builtins: false, plugins: [{ module: './echo-1.ts', loadTimeoutMs: 120_000 }] },
    });
    const [status] = host.plugins();
    if (status?.status !== 'loaded') throw new Error(`bench: echo-1 did not load: ${status?.error?.message}`);
    plugin.push(status.loadMs!);
    await host.close();
  }
  // The first start of each compiles and caches (jiti's transform cache is warm after it).
  return [
    {
      name: 'worker start: spawn → plugin loaded, p50',
      value: stats(plugin.slice(2)).median,
      unit: 'ms',
      floor: { name: 'bare worker → first message', value: stats(bare.slice(2)).median },
    },
  ];
}

/**
 * RSS added per plugin by N loaded worker plugins, and by N idle bare workers: one `node` process
 * each, so nothing else this run did is counted. Returns the plugins' figure and the floor.
 */
function workerRss(dir: string, node = process.execPath): { plugins: () => number; bare: number } {
  const probe = (body: string): number => {
    const script = `
      import { readFileSync } from 'node:fs';
      const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
      const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
      ${body}
      process.stdout.write(JSON.stringify((after - before) / ${MEMORY_PLUGINS}));
      process.exit(0);`;
    return JSON.parse(
      execFileSync(node, ['--input-type=module', '-e', script], { cwd: dir, encoding: 'utf8' }),
    ) as number;
  };
  const loadPlugins = () =>
    probe(`
    const { createHost } = await import(${JSON.stringify(DIST_INDEX)});
    const empty = await createHost({ cwd: ${JSON.stringify(dir)}, audit: false, logLevel: 'error', config: { builtins: false, plugins: [] } });
    await settle();
    const before = rss();
    const plugins = Array.from({ length: ${MEMORY_PLUGINS} }, (_, i) => ({ module: './echo-' + i + '.ts', loadTimeoutMs: 120000 }));
    const host = await createHost({ cwd: ${JSON.stringify(dir)}, audit: false, logLevel: 'error', config: { builtins: false, policy: { default: 'allow' }, plugins } });
    for (let i = 0; i < ${MEMORY_PLUGINS}; i++) {
      const r = await host.call('echo_' + i, { text: 'x' });
      if (r.isError) throw new Error(r.content);
    }
    await settle();
    const after = rss();`);
  const bare = probe(`
    const { Worker } = await import('node:worker_threads');
    await settle();
    const before = rss();
    const workers = [];
    for (let i = 0; i < ${MEMORY_PLUGINS}; i++) {
      const w = new Worker(${JSON.stringify(BARE_ECHO)}, { eval: true, execArgv: [] });
      await new Promise((resolve) => { w.once('message', resolve); w.postMessage('up'); });
      workers.push(w);
    }
    await settle();
    const after = rss();`);
  return { plugins: loadPlugins, bare };
}

function memory(dir: string): Row[] {
  const { plugins, bare } = workerRss(dir);
  // The first load transpiles each plugin with jiti's Babel in its worker; later runs hit jiti's cache.
  const cold = plugins();
  const warm = medianOf3(plugins);
  return [
    {
      name: `memory per isolated plugin (RSS, ${MEMORY_PLUGINS} loaded)`,
      value: warm,
      unit: 'MiB',
      floor: { name: 'idle bare worker', value: bare },
      target: '≤ 12 MiB',
    },
    {
      name: '  the same, first run (jiti cache cold)',
      value: cold,
      unit: 'MiB',
      floor: { name: 'idle bare worker', value: bare },
    },
  ];
}

/**
 * The same on Node 22 (scripts/node22.ts's), where a worker starts bigger: beside that Node's own
 * idle worker; jiti's cache is warm from the rows above. TypeScript plugins go through jiti in a worker there too (Node's type
 * stripper would cost each thread ~6 MiB more).
 */
function memoryOnNode22(dir: string): Row[] {
  if ((process.features as { typescript?: unknown }).typescript) return []; // the rows above are
  const node = node22();
  const { plugins, bare } = workerRss(dir, node);
  return [
    {
      name: `  the same, Node ${execFileSync(node, ['--version']).toString().trim()}`,
      value: medianOf3(plugins),
      unit: 'MiB',
      floor: { name: 'idle bare worker', value: bare },
    },
  ];
}

/**
 * The median of three runs: one process's RSS moves by a MiB or two between runs (how the threads
 * share the C allocator's arenas depends on the machine's load).
 */
function medianOf3(measure: () => number): number {
  return stats([measure(), measure(), measure()]).median;
}
