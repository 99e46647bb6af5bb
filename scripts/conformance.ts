/**
 * `npm run conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance)
 * against the host. Serves the fixture plugin (test/fixtures/conformance) with `start --mcp-http 0`
 * (sessions on), runs each scenario that concerns the host (tools, logging, sessions, elicitation,
 * sampling, SSE streams), prints scenario → result, and exits 1 when a scenario fails. Not part of
 * `npm test`: the suite is downloaded. See docs/mcp.md, "Conformance".
 *
 * The suite needs Node 22 or later (`fs.globSync`): it runs under this Node when it is one, else
 * under `RH_NODE22` or the npm package `node@22` (scripts/node22.ts). CONFORMANCE_SUITE names an
 * unpacked copy's entry (`…/dist/index.js`) to use instead of `npx`. Arguments, when given, are the
 * scenarios to run.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { node22 } from './node22.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SUITE = '@modelcontextprotocol/conformance@0.1.16';

/** The scenarios in scope; resources-*, prompts-* and completion-complete are not (the host serves neither). */
const SCENARIOS = [
  'server-initialize',
  'ping',
  'logging-set-level',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-logging',
  'tools-call-error',
  'tools-call-with-progress',
  'tools-call-sampling',
  'tools-call-elicitation',
  'json-schema-2020-12',
  'elicitation-sep1034-defaults',
  'elicitation-sep1330-enums',
  'server-sse-polling',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];

/**
 * Warnings known and why. The suite's SSE polling client POSTs its call with the header
 * `MCP-Protocol-Version: 2025-03-26`, whose clients cannot read an event without data: the SDK's
 * transport then sends no priming event, nor its `retry` (docs/mcp.md, "Conformance").
 */
const KNOWN_WARNINGS: Record<string, string> = {
  'server-sse-priming-event': 'the POST declares protocol 2025-03-26, which gets no priming event',
  'server-sse-retry-field': 'the retry field travels in the priming event',
};

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | string;
  errorMessage?: string;
}

/** Starts the host on a free loopback port; resolves to its process and MCP URL. */
async function startHost(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin/rousseau-host.js'), 'start', '--mcp-http', '0', '--cwd', join(ROOT, 'test/fixtures/conformance')],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the host did not start in 60 s:\n${stderr}`)), 60_000);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const found = /serving \d+ tools over MCP at (http:\/\/\S+)/.exec(stderr);
      if (!found) return;
      clearTimeout(timer);
      resolve(found[1]!);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the host exited (${code}) before serving:\n${stderr}`));
    });
  });
  // The host's own log goes on to this stderr, after the line we waited for.
  child.stderr!.on('data', (chunk: string) => process.stderr.write(chunk));
  return { child, url };
}

/** Runs one scenario; resolves to its checks (the suite's `checks.json`). */
async function runScenario(node: string, url: string, scenario: string, out: string): Promise<Check[]> {
  const suite = process.env.CONFORMANCE_SUITE;
  const args = ['server', '--url', url, '--scenario', scenario, '-o', out];
  const [command, argv] = suite ? [node, [suite, ...args]] : ['npx', ['-y', SUITE, ...args]];
  // npx runs the suite's bin with the first `node` on the PATH: make that the Node 22.
  const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}` };
  let log = '';
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(command, argv, { cwd: out, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => (log += chunk));
    child.stderr.on('data', (chunk: Buffer) => (log += chunk));
    child.once('error', reject);
    child.once('exit', resolve);
  });
  const dir = readdirSync(out).find((name) => name.startsWith(`server-${scenario}-`));
  if (!dir) throw new Error(`scenario ${scenario} wrote no results (exit ${code}):\n${log}`);
  return JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as Check[];
}

async function main(): Promise<number> {
  const scenarios = process.argv.length > 2 ? process.argv.slice(2) : SCENARIOS;
  const node = Number(process.versions.node.split('.')[0]) >= 22 ? process.execPath : node22();
  const work = mkdtempSync(join(tmpdir(), 'rh-conformance-'));
  const { child, url } = await startHost();
  const rows: [string, string][] = [];
  const notes: string[] = [];
  let failed = 0;
  try {
    for (const scenario of scenarios) {
      const checks = await runScenario(node, url, scenario, work);
      const failures = checks.filter((c) => c.status === 'FAILURE');
      const warnings = checks.filter((c) => c.status === 'WARNING');
      const passed = checks.filter((c) => c.status === 'SUCCESS').length;
      if (failures.length) failed++;
      for (const c of [...failures, ...warnings])
        notes.push(`${scenario} ${c.status} ${c.id}: ${KNOWN_WARNINGS[c.id] ?? c.errorMessage ?? ''}`);
      const verdict = failures.length ? `FAIL (${failures.length} of ${checks.length} checks)` : 'pass';
      rows.push([scenario, `${verdict}, ${passed} passed${warnings.length ? `, ${warnings.length} warnings` : ''}`]);
      process.stderr.write(`${scenario}: ${rows.at(-1)![1]}\n`);
    }
  } finally {
    child.kill('SIGTERM');
    rmSync(work, { recursive: true, force: true });
  }
  const width = Math.max(...rows.map(([s]) => s.length));
  const lines = rows.map(([s, r]) => `${s.padEnd(width)}  ${r}`);
  const passing = rows.length - failed;
  process.stdout.write(
    `${lines.join('\n')}\n\n${passing}/${rows.length} scenarios pass${notes.length ? `\n${notes.join('\n')}` : ''}\n`,
  );
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`conformance: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
