/**
 * `npm run soak` (not part of `npm test`): many mixed calls across worker and process plugins, a
 * fifth of the plugins faulty, with bounded concurrency; then the figures the host promises to hold
 * (docs/isolation.md, "Soak"): every call answered exactly once with one audit line, no zombie and no orphan after
 * close, RSS back near its start, and few healthy calls hurt by another call's fault.
 *
 * SOAK_CALLS scales the run (default 10,000). Calls go to every plugin alike; one call in five to a
 * faulty plugin is a fault (throw, hang, loop, exit, heap bomb, output flood, a child left behind),
 * the others healthy calls that share the isolate with them: the ones a fault can hurt, also
 * counted on their own. Quarantine is off: a plugin that faults on purpose hundreds of times would
 * otherwise fail fast, and there would be no collateral damage left to measure. Exits 1 when a
 * target is missed.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { createHost, type Host, type HostConfig } from '../core/index.ts';
import type { CallResult } from '../core/types.ts';

const CALLS = Number(process.env.SOAK_CALLS ?? 10_000);
const IN_FLIGHT = 32;
const PLUGINS = { worker: 5, process: 5 };
/** Which plugins of each isolation are faulty: the first. */
const FAULTY_PER_ISOLATION = 1;
/** Healthy tools, drawn alike: one with no annotation (cut off, it cannot run again), one read-only. */
const HEALTHY = ['echo', 'lookup'] as const;
/** Faulty tools and their weights; `throw` and `flood` are answers, the others end their isolate. */
const FAULTS = { throw: 30, flood: 15, hang: 20, spin: 15, exit: 10, oom: 3, spawn: 7 } as const;
/** The share of faults among the calls to a faulty plugin. */
const FAULT_SHARE = 0.2;
const FAULT_TIMEOUT_MS = 300;
/** Calls of the warm-up round that makes the start RSS a host that has worked. */
const WARM_UP_CALLS = 500;
const MEMORY_MB = 48;
/** A plugin's children carry it in their command line, so a survivor can be found after close. */
const MARKER = `rh-soak-${process.pid}-${Date.now()}`;

type Kind = (typeof HEALTHY)[number] | keyof typeof FAULTS;

if (!Number.isInteger(CALLS) || CALLS < 1)
  throw new Error(`SOAK_CALLS must be a positive integer, got ${process.env.SOAK_CALLS}`);

const dir = mkdtempSync(join(tmpdir(), 'rh-soak-'));
try {
  await soak();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

async function soak(): Promise<void> {
  const plugins = Object.entries(PLUGINS).flatMap(([isolation, n]) =>
    Array.from({ length: n }, (_, i) => {
      const name = `soak-${isolation}-${i}`;
      const module = join(dir, `${name}.mjs`);
      writeFileSync(module, pluginSource(name));
      return {
        name,
        faulty: i < FAULTY_PER_ISOLATION,
        prefix: name.replaceAll('-', '_'),
        config: {
          module,
          isolation: isolation as 'worker' | 'process',
          memoryMb: MEMORY_MB,
          timeoutMs: 15_000,
          loadTimeoutMs: 60_000,
        },
      };
    }),
  );
  const audit = join(dir, 'audit.jsonl');
  const own = new Map(descendants()); // the soak's own (tsx's esbuild): not the host's to end
  // The start is a host that has served the same mix once, briefly, and closed: its code loaded, and
  // the allocator's per-thread arenas made (glibc keeps them after a thread ends: a one-off cost, not
  // a leak). What the RSS grows by after that is what a long-lived host would keep growing by.
  const warmUp = await openHost(plugins, false);
  await callAll(warmUp, plugins, WARM_UP_CALLS, 'warm-up');
  await warmUp.close();
  gc();
  const rssBefore = process.memoryUsage.rss();
  const heapBefore = process.memoryUsage().heapUsed;
  let rssPeak = rssBefore;
  const seen = new Map<number, string>(); // descendant pid → its start time, to tell it from a reused pid
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
    for (const [pid, start] of descendants()) if (own.get(pid) !== start) seen.set(pid, start);
  }, 200);

  const started = performance.now();
  const host = await openHost(plugins, audit);
  const loadedMs = performance.now() - started;
  const { kinds, shared, answers, results } = await callAll(host, plugins, CALLS, 'soak');
  const callsMs = performance.now() - started - loadedMs;
  await host.close();
  clearInterval(sampler);
  await delay(1_000); // watchdog shells and killed groups take a moment to be reaped
  gc();
  const rssAfter = process.memoryUsage.rss();
  const heapAfter = process.memoryUsage().heapUsed;

  // Figures.
  const once = answers.filter((n) => n === 1).length;
  const lines = readFileSync(audit, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string; callId?: string });
  const perCall = new Map<string, number>();
  for (const line of lines) if (line.event === 'call') perCall.set(line.callId!, (perCall.get(line.callId!) ?? 0) + 1);
  const auditedOnce = [...perCall.values()].filter((n) => n === 1).length;
  const healthyCalls = kinds
    .map((k, i) => ({ kind: k, shared: shared[i]!, result: results[i]! }))
    .filter((c) => (HEALTHY as readonly string[]).includes(c.kind));
  const hurt = healthyCalls.filter((c) => c.result.isError);
  const hurtOf = (kind: string) =>
    `${hurt.filter((c) => c.kind === kind).length}/${healthyCalls.filter((c) => c.shared && c.kind === kind).length}`;
  const zombies = children().filter((p) => p.state === 'Z').length;
  const orphans = survivors(seen).length;
  const hurtShare = hurt.length / Math.max(1, healthyCalls.length);
  const rssChange = (rssAfter - rssBefore) / rssBefore;
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
  const codes = new Map<string, number>();
  for (const c of hurt) codes.set(c.result.code ?? '?', (codes.get(c.result.code ?? '?') ?? 0) + 1);

  const rows: [string, string, boolean][] = [
    ['calls answered exactly once', `${once}/${CALLS}`, once === CALLS],
    [
      'audit call lines vs calls',
      `${perCall.size} calls audited, ${auditedOnce} exactly once, of ${CALLS}`,
      auditedOnce === CALLS && perCall.size === CALLS,
    ],
    [
      'RSS before / peak / after',
      `${mib(rssBefore)} / ${mib(rssPeak)} / ${mib(rssAfter)} (${(rssChange * 100).toFixed(1)}%); JS heap ${mib(heapBefore)} / ${mib(heapAfter)}`,
      rssChange <= 0.2,
    ],
    ['zombies after close', String(zombies), zombies === 0],
    ['orphans after close', String(orphans), orphans === 0],
    [
      "healthy calls hurt by another call's fault",
      `${hurt.length}/${healthyCalls.length} (${(hurtShare * 100).toFixed(2)}%); of those sharing an isolate with faults: echo ${hurtOf('echo')}, lookup (readOnly) ${hurtOf('lookup')}; ${[...codes].map(([c, n]) => `${c} ${n}`).join(', ') || 'none'}`,
      hurtShare <= 0.01,
    ],
  ];
  process.stderr.write(
    `soak: ${CALLS} calls (${kinds.length - healthyCalls.length} faulty) over ${plugins.length} plugins (${PLUGINS.worker} worker, ${PLUGINS.process} process), ${IN_FLIGHT} in flight; load ${(loadedMs / 1000).toFixed(1)} s, calls ${(callsMs / 1000).toFixed(1)} s\n`,
  );
  if (process.env.SOAK_DEBUG)
    for (const c of hurt)
      process.stderr.write(`  ${c.kind}: ${c.result.content.slice(0, 300)} (${c.result.durationMs} ms)\n`);
  if (process.env.SOAK_DEBUG)
    for (const pid of survivors(seen))
      process.stderr.write(
        `  survivor ${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').slice(0, 200)}\n`,
      );
  for (const [name, value, ok] of rows) process.stderr.write(`${ok ? 'ok  ' : 'MISS'} ${name}: ${value}\n`);
  if (rows.some(([, , ok]) => !ok)) process.exitCode = 1;
}

type SoakPlugin = { faulty: boolean; prefix: string; config: NonNullable<HostConfig['plugins']>[number] };

async function openHost(plugins: SoakPlugin[], audit: string | false): Promise<Host> {
  const host = await createHost({
    cwd: dir,
    audit,
    logLevel: 'error',
    approve: () => true,
    config: {
      builtins: false,
      plugins: plugins.map((p) => p.config),
      isolation: { quarantine: { failures: 1_000_000 } },
    },
  });
  const failed = host.plugins().filter((p) => p.status !== 'loaded');
  if (failed.length) {
    await host.close();
    throw new Error(`plugins failed to load: ${failed.map((p) => `${p.source}: ${p.error?.message}`).join('; ')}`);
  }
  return host;
}

/** Sends `count` calls, IN_FLIGHT at a time, to plugins and kinds drawn from a seeded generator. */
async function callAll(host: Host, plugins: SoakPlugin[], count: number, ids: string) {
  const kinds: Kind[] = [];
  const shared: boolean[] = [];
  const answers = new Array<number>(count).fill(0);
  /** What a call's result says, kept small: the content only of errors (they are few). */
  const results: Pick<CallResult, 'isError' | 'code' | 'content' | 'durationMs'>[] = [];
  let next = 0;
  const random = seeded(11);
  const lane = async () => {
    for (let i = next++; i < count; i = next++) {
      const plugin = plugins[Math.floor(random() * plugins.length)]!;
      const kind = pick(random, plugin.faulty);
      kinds[i] = kind;
      shared[i] = plugin.faulty;
      const result = await host.call(`${plugin.prefix}_${kind}`, { n: i }, { callId: `${ids}-${i}` });
      answers[i]!++;
      results[i] = {
        isError: result.isError,
        code: result.code,
        content: result.isError ? result.content.slice(0, 500) : '',
        durationMs: result.durationMs,
      };
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return { kinds, shared, answers, results };
}

function pick(random: () => number, faulty: boolean): Kind {
  if (!faulty || random() >= FAULT_SHARE) return HEALTHY[Math.floor(random() * HEALTHY.length)]!;
  const total = Object.values(FAULTS).reduce((a, b) => a + b, 0);
  let at = random() * total;
  for (const [kind, weight] of Object.entries(FAULTS)) {
    at -= weight;
    if (at < 0) return kind as Kind;
  }
  return 'throw';
}

/** A small deterministic generator (mulberry32): the same run each time. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** A plugin with every kind of call; plain JS with a JSON schema, so loading costs no transform. */
function pluginSource(name: string): string {
  const prefix = name.replaceAll('-', '_');
  return `import { spawn } from 'node:child_process';
const input = { type: 'object', properties: { n: { type: 'integer', description: 'Call number.' } }, required: ['n'] };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const tool = (kind, execute, extra = {}) => ({ name: '${prefix}_' + kind, description: 'Soak: ' + kind + '.', inputSchema: input, execute, ...extra });
export default {
  name: '${name}',
  version: '1.0.0',
  tools: [
    tool('echo', async ({ n }) => { await sleep(n % 20); return 'ok ' + n; }),
    tool('lookup', async ({ n }) => { await sleep(n % 20); return 'ok ' + n; }, { annotations: { readOnly: true } }),
    tool('throw', () => { throw new Error('thrown'); }),
    tool('flood', ({ n }, ctx) => { for (let i = 0; i < 2000; i++) ctx.log.info('line ' + i); return 'x'.repeat(200_000 + n); }),
    tool('hang', () => new Promise(() => {}), { timeoutMs: ${FAULT_TIMEOUT_MS} }),
    tool('spin', () => { for (;;) {} }, { timeoutMs: ${FAULT_TIMEOUT_MS} }),
    tool('exit', () => process.exit(3)),
    tool('oom', () => { const hoard = []; for (;;) hoard.push(new Array(10_000).fill(hoard.length)); }),
    tool('spawn', () => { spawn('/bin/sh', ['-c', 'sleep 600', '${MARKER}'], { stdio: 'ignore' }); return new Promise(() => {}); }, { timeoutMs: ${FAULT_TIMEOUT_MS} }),
  ],
};
`;
}

interface Proc {
  pid: number;
  ppid: number;
  state: string;
  start: string;
}

function processes(): Proc[] {
  const out: Proc[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ pid: Number(entry), state: fields[0]!, ppid: Number(fields[1]), start: fields[19]! });
    } catch {
      // it ended while we looked
    }
  }
  return out;
}

function children(): Proc[] {
  return processes().filter((p) => p.ppid === process.pid);
}

/** Every process below the host, by parent links; plugin processes lead groups of their own, but not sessions of parents. */
function descendants(): [number, string][] {
  const all = processes();
  const below = new Set([process.pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of all) {
      if (!below.has(p.pid) && below.has(p.ppid)) {
        below.add(p.pid);
        grew = true;
      }
    }
  }
  below.delete(process.pid);
  return all.filter((p) => below.has(p.pid)).map((p) => [p.pid, p.start]);
}

/**
 * Processes still running (not zombies) that were once below the host (same pid and start time), or
 * that carry this run's marker (a plugin's child started and orphaned between two samples).
 */
function survivors(seen: Map<number, string>): number[] {
  return processes()
    .filter((p) => p.state !== 'Z' && (seen.get(p.pid) === p.start || carriesMarker(p.pid)))
    .map((p) => p.pid);
}

function carriesMarker(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(MARKER);
  } catch {
    return false; // gone
  }
}
