// Reads the log of a `scripts/test-cpu.sh` run: where `npm test`'s CPU went, by test file and by
// kind of child process, and how many plugin worker threads each file started.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const records = readFileSync(process.argv[2], 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line));
const workers = new Set(records.filter((r) => r.argv?.includes('mocha/lib/nodejs/worker')).map((r) => r.pid));
const lastCpu = new Map(records.filter((r) => r.rec === 'proc').map((r) => [r.pid, r.cpu]));

/** What a child was: the CLI command, a process-isolated plugin, a script run by node or a shell, or the program. */
function kind(args) {
  const cli = /rousseau-host\.js (\S+)(?: (--[\w-]+))?/.exec(args);
  if (cli) return `rousseau-host ${cli[1]}${cli[2] ? ` ${cli[2]}` : ''}`;
  if (args.includes("getBuiltinModule('node:v8')")) return 'a process-isolated plugin';
  const [program, ...rest] = args.split(/\s+/);
  if (/\/(ba)?sh$/.test(program)) return `${basename(program)} -c …`;
  if (rest.includes('-e') || rest.includes('--eval')) return `${basename(program)} -e …`;
  const script = rest.find((word) => !word.startsWith('-'));
  return basename(script ?? program);
}

const files = new Map();
const kinds = new Map();
const fileOf = (name) => {
  if (!files.has(name)) files.set(name, { own: 0, children: 0, spawned: 0, threads: 0, wall: 0 });
  return files.get(name);
};
for (const r of records) {
  if (r.rec === 'file') {
    fileOf(r.file).own += r.cpu;
    fileOf(r.file).wall += r.wall ?? 0;
  }
  if (!workers.has(r.pid)) continue;
  if (r.rec === 'thread' && r.entry !== 'eval' && r.file) fileOf(r.file).threads++;
  if (r.rec === 'child') {
    if (r.file)
      Object.assign(fileOf(r.file), { children: fileOf(r.file).children + r.cpu, spawned: fileOf(r.file).spawned + 1 });
    const k = kinds.get(kind(r.args)) ?? { cpu: 0, count: 0, signalled: 0 };
    kinds.set(kind(r.args), { cpu: k.cpu + r.cpu, count: k.count + 1, signalled: k.signalled + (r.signal ? 1 : 0) });
  }
}

const s = (n) => n.toFixed(1).padStart(6);
const workerCpu = [...workers].reduce((sum, pid) => sum + (lastCpu.get(pid) ?? 0), 0);
const childCpu = [...kinds.values()].reduce((sum, k) => sum + k.cpu, 0);
const threads = [...files.values()].reduce((sum, f) => sum + f.threads, 0);
console.log(
  `mocha workers (${workers.size}): ${s(workerCpu)} s of their own CPU, ${threads} plugin worker threads among it`,
);
console.log(`their child processes:${s(childCpu)} s, with what those started\n`);
console.log(`${'test file'.padEnd(50)}  total    own  child  spawned  threads    wall`);
for (const [name, f] of [...files].sort((a, b) => b[1].own + b[1].children - (a[1].own + a[1].children)))
  console.log(
    `${name.padEnd(50)} ${s(f.own + f.children)} ${s(f.own)} ${s(f.children)} ${String(f.spawned).padStart(8)} ${String(f.threads).padStart(8)} ${s(f.wall)}`,
  );
console.log(`\n${'child process'.padEnd(40)}    cpu  count  by a signal`);
for (const [name, k] of [...kinds].sort((a, b) => b[1].cpu - a[1].cpu))
  console.log(`${name.padEnd(40)} ${s(k.cpu)} ${String(k.count).padStart(6)} ${String(k.signalled).padStart(12)}`);
