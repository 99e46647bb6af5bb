/**
 * Host core figures, each beside its floor from the same run:
 * - per-call overhead of `host.call()` on an inline echo tool, with the audit trail off and on (the
 *   default), vs a bare `await execute()` and a bare compiled validation (interleaved batches,
 *   median and p99 of per-call means per batch; an overhead is the median of per-round differences;
 *   the audited overhead in CPU time too);
 * - load time of 1, 10 and 100 generated TypeScript plugins (3 tools each), cold and warm jiti cache,
 *   in a fresh process each, vs `node -e 0`; on a Node that strips types (this one, or Node 22 from
 *   scripts/node22.ts), 100 plugins through Node's own loader, cold and warm, vs Node importing the
 *   same files;
 * - CLI start-up: `--version` and `tools` (built-ins only) vs `node -e 0`.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { node22 } from '../node22.ts';
import { stats, type Row } from './report.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'rousseau-host.js');

export async function run(): Promise<Row[]> {
  return [...(await callOverhead()), ...pluginLoad(), ...cliStartup()];
}

/**
 * Runs each variant in interleaved batches of ~2 ms, the first variant of a round rotating (a fixed
 * order gave one variant the same neighbour every round); returns per-call samples per variant,
 * one per round: wall ns, and CPU ns (user + system of this process), which time the other
 * processes on a shared machine take does not count in.
 */
async function interleave(
  variants: Record<string, () => unknown>,
  rounds: number,
  batch: number,
): Promise<{ wall: Record<string, number[]>; cpu: Record<string, number[]> }> {
  const empty = () => Object.fromEntries(Object.keys(variants).map((k) => [k, [] as number[]]));
  const wall = empty();
  const cpu = empty();
  const entries = Object.entries(variants);
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < entries.length; j++) {
      const [name, fn] = entries[(r + j) % entries.length]!;
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < batch; i++) await fn();
      wall[name]!.push(Number(process.hrtime.bigint() - t0) / batch);
      const c = process.cpuUsage(c0);
      cpu[name]!.push(((c.user + c.system) * 1000) / batch);
    }
  }
  return { wall, cpu };
}

async function callOverhead(): Promise<Row[]> {
  // The bundle, as the CLI runs it: under tsx every closure of the source would carry a naming shim.
  const { createHost } = (await import(join(ROOT, 'dist', 'index.js'))) as typeof import('../../core/index.ts');
  const inputSchema = Type.Object({ text: Type.String({ description: 'Text.' }) }, { additionalProperties: false });
  const execute = async ({ text }: { text: string }) => text;
  const dir = mkdtempSync(join(tmpdir(), 'rh-bench-'));
  const file = join(dir, 'echo.mjs');
  writeFileSync(
    file,
    `export default { name: 'echo', version: '1.0.0', tools: [{ name: 'echo', description: 'Echo.', annotations: { readOnly: true }, inputSchema: ${JSON.stringify(inputSchema)}, execute: async ({ text }) => text }] };`,
  );
  const config = { builtins: false as const, plugins: [{ module: file, isolation: 'inline' as const }] };
  const host = await createHost({ cwd: dir, audit: false, logLevel: 'error', config });
  const audited = await createHost({ cwd: dir, audit: join(dir, 'audit.jsonl'), logLevel: 'error', config });
  const validator = Compile(inputSchema);
  const input = { text: 'hello' };
  const json = '{"text":"hello"}';

  // Side by side, interleaved: all four see the machine at the same moments.
  const variants = {
    bare: () => execute(input),
    validate: () => validator.Check(input),
    host: () => host.call('echo', json),
    audited: () => audited.call('echo', json),
  };
  await interleave(variants, 20, 2000); // warm-up
  const { wall: s, cpu } = await interleave(variants, 200, 500);
  // An overhead is the median over rounds of that round's difference: batches of one round ran
  // within a few ms of each other, so the machine's swings cancel in it.
  const over = (m: Record<string, number[]>, name: string, ...less: string[]) =>
    stats(m[name]!.map((v, r) => less.reduce((rest, l) => rest - m[l]![r]!, v))).median;
  const bare = stats(s.bare!);
  const validate = stats(s.validate!);
  const call = stats(s.host!);
  const withAudit = stats(s.audited!);
  await host.close();
  await audited.close();
  rmSync(dir, { recursive: true, force: true });
  const us = (ns: number) => ns / 1000;
  const floor = { name: 'bare execute', value: us(bare.median) };
  return [
    { name: 'bare await execute(): median', value: us(bare.median), unit: 'µs' },
    { name: 'bare compiled validation: median', value: us(validate.median), unit: 'µs' },
    { name: 'host.call() inline echo, audit off: median', value: us(call.median), unit: 'µs', floor },
    { name: 'host.call() inline echo, audit off: p99', value: us(call.p99), unit: 'µs' },
    {
      name: 'host overhead, audit off (call − execute − validation)',
      value: us(over(s, 'host', 'bare', 'validate')),
      unit: 'µs',
    },
    { name: 'host.call() inline echo, audit on (default): median', value: us(withAudit.median), unit: 'µs', floor },
    { name: 'host.call() inline echo, audit on (default): p99', value: us(withAudit.p99), unit: 'µs' },
    {
      name: 'host overhead, audit on (call − execute)',
      value: us(over(s, 'audited', 'bare')),
      unit: 'µs',
    },
    {
      name: 'CPU time: host overhead, audit off (call − execute)',
      value: us(over(cpu, 'host', 'bare')),
      unit: 'µs',
    },
    {
      name: 'CPU time: host overhead, audit on (call − execute)',
      value: us(over(cpu, 'audited', 'bare')),
      unit: 'µs',
      target: '≤ 5 µs',
    },
  ];
}

/**
 * Generates `count` TypeScript plugins with 3 tools each, in an ES module package as docs/plugins.md
 * advises: without `"type": "module"` Node strips each file's types twice, once to tell its format.
 */
function generatePlugins(dir: string, count: number): void {
  writeFileSync(join(dir, 'package.json'), '{ "name": "bench-plugins", "private": true, "type": "module" }');
  for (let i = 0; i < count; i++) {
    const tools = [0, 1, 2]
      .map(
        (j) => `    defineTool({
      name: 'p${i}_tool${j}',
      description: 'Tool ${j} of generated plugin ${i}: returns its input text with a suffix.',
      inputSchema: Type.Object({ text: Type.String({ description: 'Input text.' }), limit: Type.Optional(Type.Integer({ description: 'Max length.', minimum: 1 })) }, { additionalProperties: false }),
      annotations: { readOnly: true },
      async execute({ text, limit }: { text: string; limit?: number }) {
        const out: string = text + ' #${j}';
        return limit ? out.slice(0, limit) : out;
      },
    }),`,
      )
      .join('\n');
    writeFileSync(
      join(dir, `plugin-${String(i).padStart(3, '0')}.ts`),
      `import Type from 'typebox';\nimport { definePlugin, defineTool } from 'rousseau-host';\n\ninterface Options { prefix?: string }\n\nexport default definePlugin({\n  name: 'gen-${i}',\n  version: '1.0.0',\n  tools: [\n${tools}\n  ],\n});\n`,
    );
  }
}

function wallMs(args: string[], env: NodeJS.ProcessEnv = {}): number {
  const t0 = performance.now();
  execFileSync(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
  return performance.now() - t0;
}

function median(xs: number[]): number {
  return stats(xs).median;
}

function pluginLoad(): Row[] {
  const dir = mkdtempSync(join(tmpdir(), 'rh-bench-plugins-'));
  generatePlugins(dir, 100);
  const child = join(ROOT, 'scripts', 'bench', 'load-child.mjs');
  const nodeFloor = median([0, 1, 2, 3, 4].map(() => wallMs(['-e', '0'])));
  const rows: Row[] = [];
  for (const n of [1, 10, 100]) {
    const cold: number[] = [];
    const warm: number[] = [];
    for (let rep = 0; rep < 3; rep++) {
      // Cold: jiti transpiles every plugin again (and rewrites its cache); warm: it reads the cache.
      const t0 = performance.now();
      const out = JSON.parse(
        execFileSync(process.execPath, [child, dir, String(n)], {
          env: { ...process.env, JITI_REBUILD_FS_CACHE: 'true' },
        }).toString(),
      ) as { ms: number; loaded: number };
      if (out.loaded !== n) throw new Error(`only ${out.loaded} of ${n} plugins loaded`);
      cold.push(performance.now() - t0);
      const t1 = performance.now();
      execFileSync(process.execPath, [child, dir, String(n)]);
      warm.push(performance.now() - t1);
    }
    rows.push({
      name: `load ${n} TS plugins (3 tools each), cold cache`,
      value: median(cold),
      unit: 'ms',
      floor: { name: 'node -e 0', value: nodeFloor },
      ...(n === 100 ? { target: '≤ 2000 ms' } : {}),
    });
    rows.push({
      name: `load ${n} TS plugins (3 tools each), warm cache`,
      value: median(warm),
      unit: 'ms',
      floor: { name: 'node -e 0', value: nodeFloor },
      ...(n === 100 ? { target: '≤ 500 ms' } : {}),
    });
  }
  rows.push(...nativeLoad(dir));
  rmSync(dir, { recursive: true, force: true });
  return rows;
}

/**
 * A Node that strips types (≥ 22.18): this one, or Node 22 from scripts/node22.ts. The host's load of
 * 100 plugins through Node's own loader, cold (types stripped from every file) and warm (the
 * stripped text kept from the last start, docs/plugins.md), beside Node importing the same files itself
 * and beside the same load through jiti's warm cache (how the host loaded them before): wall time, and the CPU time each
 * process used (user + system, its own count: other processes on a shared machine do not add to it).
 */
function nativeLoad(dir: string): Row[] {
  const node = (process.features as { typescript?: unknown }).typescript ? process.execPath : node22();
  const scripts = {
    cold: join(ROOT, 'scripts', 'bench', 'load-child.mjs'),
    warm: join(ROOT, 'scripts', 'bench', 'load-child.mjs'),
    jiti: join(ROOT, 'scripts', 'bench', 'load-child.mjs'),
    native: join(ROOT, 'scripts', 'bench', 'native-child.mjs'),
  };
  const wall: Record<string, number[]> = { cold: [], warm: [], jiti: [], native: [] };
  const cpu: Record<string, number[]> = { cold: [], warm: [], jiti: [], native: [] };
  const variants = Object.entries(scripts);
  const stripCache = { cold: join(dir, '.strip-cold'), warm: join(dir, '.strip-warm') };
  // Issue 13's "today": the same files loaded through jiti's warm cache, as the host did before it
  // used Node's own loader (a package.json without "type" sends them to jiti).
  const jitiDir = `${dir}-jiti`;
  mkdirSync(jitiDir);
  writeFileSync(join(jitiDir, 'package.json'), '{ "name": "bench-plugins-jiti", "private": true }');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts')))
    copyFileSync(join(dir, file), join(jitiDir, file));
  // A pass unmeasured (the files and Node's binary into the page cache, jiti's cache written), then 9
  // interleaved: on a shared machine 5 left the ratio swinging by ±5%. Each pass starts with the next
  // variant, so none is always the one that runs first after the others.
  for (let rep = -1; rep < 9; rep++) {
    for (let i = 0; i < variants.length; i++) {
      const [name, script] = variants[(Math.max(rep, 0) + i) % variants.length]!;
      // Cold: Node strips every file's types again (an empty cache of stripped text; a plugin Node
      // refused would be transpiled again by jiti); warm: the files were loaded before.
      if (name === 'cold') rmSync(stripCache.cold, { recursive: true, force: true });
      const env = {
        ...process.env,
        ...(name === 'cold'
          ? { JITI_REBUILD_FS_CACHE: 'true', RH_CACHE_DIR: stripCache.cold }
          : { RH_CACHE_DIR: stripCache.warm }),
      };
      const t0 = performance.now();
      const from = name === 'jiti' ? jitiDir : dir;
      const out = JSON.parse(execFileSync(node, [script, from, '100'], { env }).toString()) as {
        loaded: number;
        cpuMs: number;
      };
      if (out.loaded !== 100) throw new Error(`${script}: only ${out.loaded} of 100 plugins loaded`);
      if (rep < 0) continue;
      wall[name]!.push(performance.now() - t0);
      cpu[name]!.push(out.cpuMs);
    }
  }
  const version = execFileSync(node, ['--version']).toString().trim();
  const floor = (of: Record<string, number[]>) => ({
    name: "Node's own import of the files",
    value: median(of.native!),
  });
  rmSync(jitiDir, { recursive: true, force: true });
  const today = (of: Record<string, number[]>) => ({
    name: "jiti's warm cache (issue 13's today)",
    value: median(of.jiti!),
  });
  return [
    ...(['cold', 'warm'] as const).flatMap((cache) => [
      {
        name: `load 100 TS plugins, Node ${version}, ${cache} cache`,
        value: median(wall[cache]!),
        unit: 'ms',
        floor: floor(wall),
        ...(cache === 'cold' ? { target: '≤ 1.3×' } : {}),
      },
      { name: '  the same, CPU', value: median(cpu[cache]!), unit: 'ms', floor: floor(cpu) },
    ]),
    // Issue 13: warm "as today or better", today being the host's load through jiti's warm cache.
    {
      name: "  warm, beside the load before Node's loader",
      value: median(wall.warm!),
      unit: 'ms',
      floor: today(wall),
      target: '≤ 1.0×',
    },
    { name: '  the same, CPU', value: median(cpu.warm!), unit: 'ms', floor: today(cpu) },
  ];
}

function cliStartup(): Row[] {
  const dir = mkdtempSync(join(tmpdir(), 'rh-bench-cli-'));
  writeFileSync(join(dir, 'package.json'), '{"name":"bench"}');
  const node: number[] = [];
  const version: number[] = [];
  const tools: number[] = [];
  wallMs([BIN, 'tools', '--cwd', dir]); // warm the jiti cache and the page cache
  for (let i = 0; i < 10; i++) {
    node.push(wallMs(['-e', '0']));
    version.push(wallMs([BIN, '--version']));
    tools.push(wallMs([BIN, 'tools', '--cwd', dir]));
  }
  rmSync(dir, { recursive: true, force: true });
  const floor = { name: 'node -e 0', value: median(node) };
  return [
    { name: 'node -e 0', value: median(node), unit: 'ms' },
    { name: 'rousseau-host --version', value: median(version), unit: 'ms', floor, target: '≤ 2×' },
    { name: 'rousseau-host tools (built-ins only)', value: median(tools), unit: 'ms', floor, target: '≤ 4×' },
  ];
}
