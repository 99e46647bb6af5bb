/**
 * Start-up cost of `rousseau-host` commands, in CPU time (user + system of the process and of every
 * process it waited for: the figure a shared machine cannot skew the way it skews wall time), each
 * beside its floor from the same run, a bare `node -e 0`; a bare import of the CLI bundle is the
 * first row, what every command pays before it does anything.
 *
 * CPU time of a finished child comes from this process's own `cutime + cstime` (/proc/self/stat,
 * Linux), read before and after each child is reaped; children run one at a time, commands in turn
 * (one of each per round), so every command sees the machine in the same state.
 *
 * `RH_BENCH_STARTUP_COMPARE=<another built checkout>` runs its commands too, interleaved with these,
 * and reports them beside: an A/B of two builds measured at the same moments.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stats, type Row } from './report.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const COMPARE = process.env.RH_BENCH_STARTUP_COMPARE;
const ROUNDS = Number(process.env.RH_BENCH_STARTUP_ROUNDS ?? 10);
/** Clock ticks per second of /proc's times (USER_HZ, 100 on Linux). */
const TICK_MS = 10;

/** CPU ms this process's reaped children have used so far (their own reaped children included). */
function childrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // The fields after the command name, which may hold spaces and parentheses: cutime and cstime are 16 and 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
}

interface Probe {
  name: string;
  args: string[];
  /** Written to stdin; the child runs until it exits (stdin is then closed). */
  stdin?: string;
  /** Written to stdin once stdout holds text that matches `after`: the next messages of a session. */
  next?: { after: RegExp; send: string };
  /** For a server: the stdout text after which stdin is closed so that it exits. */
  until?: RegExp;
  /** For a server that does not read stdin: the stderr text after which it is sent SIGTERM, and exits. */
  untilStderr?: RegExp;
}

/** Runs one probe to its exit; resolves to the CPU ms it used. */
function cpuOf(probe: Probe): Promise<number> {
  const before = childrenCpuMs();
  const child = spawn(process.execPath, probe.args, {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let next = probe.next;
  let stopped = false;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    if (next?.after.test(out)) {
      child.stdin.write(next.send);
      next = undefined;
    }
    if (!next && probe.until?.test(out)) child.stdin.end();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
    if (!stopped && probe.untilStderr?.test(err)) {
      stopped = true;
      child.kill('SIGTERM');
    }
  });
  if (probe.stdin !== undefined) child.stdin.write(probe.stdin);
  if (!probe.until) child.stdin.end();
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`bench: ${probe.name} exited ${code}:\n${err}${out}`));
      else resolve(childrenCpuMs() - before);
    });
  });
}

const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } },
})}\n`;

/** After the answer to `initialize`: the rest of the handshake, and the request every client sends next. */
const TOOLS_LIST = `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n${JSON.stringify({
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/list',
})}\n`;

const ECHO_PLUGIN = `import Type from 'typebox';
export default {
  name: 'echo',
  version: '1.0.0',
  tools: [{ name: 'echo', description: 'Echo the text back.', inputSchema: Type.Object({ text: Type.String({ description: 'Text.' }) }), execute: ({ text }: { text: string }) => text }],
};
`;

/** The commands of the checkout at `root`, each name ending in `suffix`. */
function commands(root: string, dir: string, suffix: string): Probe[] {
  const demo = join(root, 'examples', 'demo');
  const host = (...args: string[]): string[] => [join(root, 'bin', 'rousseau-host.js'), ...args];
  const cli = pathToFileURL(join(root, 'dist', 'cli.js')).href;
  return [
    { name: 'import of dist/cli.js', args: ['--input-type=module', '-e', `await import(${JSON.stringify(cli)})`] },
    { name: 'rousseau-host --version', args: host('--version') },
    { name: 'rousseau-host tools (demo: fs, shell)', args: host('tools', '--cwd', demo) },
    { name: 'rousseau-host check (one-tool plugin)', args: host('check', join(dir, 'echo.ts')) },
    { name: 'rousseau-host call read (demo)', args: host('call', 'read', '{"path":"notes.md"}', '--cwd', demo) },
    {
      name: 'rousseau-host call echo (an inline plugin)',
      args: host('call', 'echo', '{"text":"hi"}', '--yes', '--cwd', join(dir, 'inline')),
    },
    {
      name: 'rousseau-host start --mcp → initialize',
      args: host('start', '--mcp', '--cwd', demo),
      stdin: INITIALIZE,
      until: /"id":1/,
    },
    {
      name: 'rousseau-host start --mcp → tools/list (worker)',
      args: host('start', '--mcp', '--cwd', join(dir, 'worker')),
      stdin: INITIALIZE,
      next: { after: /"id":1/, send: TOOLS_LIST },
      until: /"id":2/,
    },
    {
      name: 'rousseau-host serve → listening (worker)',
      args: host('serve', '--port', '0', '--cwd', join(dir, 'worker')),
      untilStderr: /serving \d+ tools/,
    },
    {
      name: 'rousseau-host tools --json (a worker plugin)',
      args: host('tools', '--json', '--cwd', join(dir, 'worker')),
    },
    { name: 'rousseau-host tools (a process plugin)', args: host('tools', '--cwd', join(dir, 'process')) },
  ].map((p) => ({ ...p, name: p.name + suffix }));
}

export async function run(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rh-bench-startup-'));
  try {
    writeFileSync(join(dir, 'echo.ts'), ECHO_PLUGIN);
    // The echo plugin alone, in each isolation: one folder each, with its JSON config.
    for (const isolation of ['inline', 'worker', 'process']) {
      mkdirSync(join(dir, isolation));
      writeFileSync(
        join(dir, isolation, 'rousseau.config.json'),
        JSON.stringify({
          builtins: false,
          log: { audit: false },
          plugins: [{ module: '../echo.ts', isolation }],
        }),
      );
    }
    const floor: Probe = { name: 'node -e 0', args: ['-e', '0'] };
    const ours = commands(ROOT, dir, '');
    const theirs = COMPARE ? commands(COMPARE, dir, ' (compare)') : [];
    const all = [floor, ...ours.flatMap((p, i) => [p, ...(theirs[i] ? [theirs[i]!] : [])])];
    // One warm-up of each (jiti's cache, the page cache), then rounds of one of each in turn.
    for (const p of all) await cpuOf(p);
    const samples = new Map<string, number[]>(all.map((p) => [p.name, []]));
    for (let round = 0; round < ROUNDS; round++) for (const p of all) samples.get(p.name)!.push(await cpuOf(p));
    const node = { name: floor.name, value: stats(samples.get(floor.name)!).median };
    return all
      .filter((p) => p !== floor)
      .map((p) => ({ name: `${p.name}, CPU p50`, value: stats(samples.get(p.name)!).median, unit: 'ms', floor: node }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
