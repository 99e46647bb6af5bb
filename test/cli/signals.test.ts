// Every CLI command stops on SIGTERM and SIGHUP as it does on Ctrl-C: the call in flight is
// cancelled and the host closed, so the command a tool started is gone when the CLI has exited, and
// the exit code is 128 + the signal's number. Node's default for these signals ends the process at
// once and leaves the command running.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, tempDir, until } from '../helpers.ts';
import { processesRunning } from '../plugins/shell/procs.ts';

const NO_KEYS = { ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', OPENAI_BASE_URL: '', ANTHROPIC_BASE_URL: '' };

describe('rousseau-host stop signals', function () {
  this.timeout(40_000);
  let t: ReturnType<typeof tempDir>;
  let startedFile: string;
  let command: string;
  // The command runs in its own PID namespace (the shell tool's sandbox), where `$!` means nothing
  // to the host: the sleep is found by a command line no other process has.
  let sleep: string;
  beforeEach(() => {
    t = tempDir();
    t.write('package.json', '{"name":"signals-test"}');
    t.write(
      'rousseau.config.json',
      JSON.stringify({ builtins: ['shell'], policy: { default: 'allow' }, log: { audit: false } }),
    );
    startedFile = join(t.dir, 'sleep.started');
    sleep = `sleep 300.${process.pid}${Date.now() % 1_000_000}`;
    command = `${sleep} & touch ${JSON.stringify(startedFile)}; wait`;
  });
  afterEach(() => {
    for (const pid of processesRunning(sleep)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }
    t.cleanup();
  });
  const running = () => processesRunning(sleep).length > 0;

  /** Runs the CLI until the tool's `sleep` has started, sends `signal`, and returns the exit code. */
  async function stopWhileRunning(
    args: string[],
    signal: NodeJS.Signals,
    input?: string,
  ): Promise<{ code: number | null; killedBy: NodeJS.Signals | null; stderr: string }> {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: t.dir,
      env: { ...process.env, ...NO_KEYS, NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.resume();
    if (input !== undefined) child.stdin.write(input);
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('close', (code, sig) => resolve([code, sig])),
    );
    try {
      await until(() => existsSync(startedFile), {
        timeoutMs: 15_000,
        message: () => `the sleep to start; stderr: ${stderr}`,
      });
      // The shell forks the sleep before it touches the file, but the fork may not have exec'd `sleep` yet.
      await until(running, { timeoutMs: 15_000, message: () => `${sleep} to run; stderr: ${stderr}` });
      child.kill(signal);
      const [code, killedBy] = await exited;
      return { code, killedBy, stderr };
    } finally {
      child.kill('SIGKILL');
    }
  }

  const expected = { SIGTERM: 143, SIGHUP: 129, SIGINT: 130 } as const;

  for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) {
    it(`call: ${signal} cancels the call, ends the command it started and exits ${expected[signal]}`, async () => {
      const r = await stopWhileRunning(['call', 'bash', JSON.stringify({ command }), '--yes', '--json'], signal);
      expect(r.killedBy, r.stderr).to.equal(null);
      expect(r.code, r.stderr).to.equal(expected[signal]);
      await until(() => !running(), { timeoutMs: 5000, message: `${sleep} to end` });
    });
  }

  for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
    it(`start -p: ${signal} cancels the run, ends the command a tool started and exits ${expected[signal]}`, async () => {
      const script = t.write(
        'script.json',
        JSON.stringify({ turns: [{ toolCalls: [{ name: 'bash', input: { command } }] }, { text: 'never reached' }] }),
      );
      const r = await stopWhileRunning(['start', '--replay', script, '-p', 'go'], signal);
      expect(r.killedBy, r.stderr).to.equal(null);
      expect(r.code, r.stderr).to.equal(expected[signal]);
      await until(() => !running(), { timeoutMs: 5000, message: `${sleep} to end` });
    });

    it(`start --mcp: ${signal} cancels the call in flight, ends its command and exits ${expected[signal]}`, async () => {
      const messages = [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
        },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'bash', arguments: { command } } },
      ];
      const r = await stopWhileRunning(
        ['start', '--mcp'],
        signal,
        messages.map((m) => `${JSON.stringify(m)}\n`).join(''),
      );
      expect(r.killedBy, r.stderr).to.equal(null);
      expect(r.code, r.stderr).to.equal(expected[signal]);
      await until(() => !running(), { timeoutMs: 5000, message: `${sleep} to end` });
    });
  }
});
