import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Plugin, Tool } from '../../../core/contract.ts';
import { createHost } from '../../../core/host.ts';
import { tempDir, until } from '../../helpers.ts';
import { loadPluginModule } from '../load.ts';
import { toolContext } from '../tool-context.ts';
import { processesMatching, processesRunning } from './procs.ts';

interface BashResult {
  content: string;
  isError: boolean;
  data: {
    exitCode: number | null;
    signal: string | null;
    killedFor?: string;
    truncated: boolean;
    outputBytes: number;
    backgroundGroup?: number;
  };
}

// Every case in each sandbox (bubblewrap, unshare, none): a command behaves the same in all three.
for (const [n, sandbox] of (['bwrap', 'unshare', 'none'] as const).entries())
  describe(`plugins/shell bash (cases 59–63), sandbox ${sandbox}`, function () {
    this.timeout(20_000);
    let plugin: Plugin;
    let tmp: ReturnType<typeof tempDir>;
    let workspace: string;
    let lifetime: AbortController;
    let bash: Tool;
    const options = { killGraceMs: 300, sandbox };
    // A marker unique to this run, in every long-lived command, to find leftovers in /proc.
    const mark = `${process.pid}${Date.now() % 100000}${n}`;
    const sleeper = (n: number) => `sleep 3${n}.${mark}`;
    const noneLeft = () =>
      until(() => processesMatching(mark).length === 0, {
        intervalMs: 50,
        message: () => `the processes of this test to end (left: ${processesMatching(mark).join(', ')})`,
      });

    before(async () => {
      plugin = (await loadPluginModule<{ default: Plugin }>('plugins/shell/index.ts')).default;
    });
    beforeEach(async () => {
      tmp = tempDir('rh-shell-');
      workspace = tmp.dir;
      lifetime = new AbortController();
      bash = (
        (await plugin.setup!({ options, log: toolContext('/').log, workspace, signal: lifetime.signal })) as Tool[]
      )[0]!;
    });
    afterEach(async () => {
      lifetime.abort(); // as when the host closes
      await noneLeft();
      tmp.cleanup();
    });

    const run = async (
      command: string,
      extra: { timeout_ms?: number } = {},
      opts: Record<string, unknown> = options,
      signal?: AbortSignal,
    ) => (await bash.execute({ command, ...extra }, toolContext(workspace, opts, signal))) as BashResult;

    it('returns at once when a background job still holds the pipe, and ends the job when the host closes', async () => {
      const result = await run(`${sleeper(0)} & echo started`);
      expect(result.content).to.equal(
        `started\n[exit code 0]\n[background processes still run in process group ${result.data.backgroundGroup}; their output is not collected; they end when the host closes]`,
      );
      expect(result.isError).to.equal(false);
      // `&` forks before `echo`, but the fork may not have exec'd the sleep yet: wait for it to show.
      await until(() => processesRunning(sleeper(0)).length === 1, {
        timeoutMs: 10_000,
        message: 'the background sleep',
      });
      lifetime.abort();
      await noneLeft();
    });

    it('does not wait for output a background job writes later', async () => {
      const result = await run(`(${sleeper(1)}; echo late) & echo early`);
      expect(result.content).to.match(/^early\n\[exit code 0\]/);
    });

    it('kills an endless writer (yes) at the output cap, keeping head and tail', async () => {
      const result = await run(`yes ${mark}`);
      expect(result.isError).to.equal(true);
      expect(result.data.killedFor).to.equal('output');
      expect(result.data.truncated).to.equal(true);
      expect(result.content).to.match(new RegExp(`^${mark}\\n${mark}\\n`));
      expect(result.content).to.match(
        /\[… \d+ bytes of output omitted \(\d+ in all\): first and last 16000 bytes kept …\]/,
      );
      expect(result.content).to.match(/\n\[killed: printed more than 8388608 bytes\]$/);
      expect(Buffer.byteLength(result.content)).to.be.below(33_000);
    });

    it('kills the whole process group on timeout, background jobs included', async () => {
      const result = await run(`${sleeper(2)} & ${sleeper(3)} & ${sleeper(4)}`, { timeout_ms: 300 });
      expect(result.data.killedFor).to.equal('timeout');
      expect(result.content).to.equal('(no output)\n[killed: timed out after 300 ms]');
      await noneLeft();
    });

    it('escalates to SIGKILL when the command ignores SIGTERM', async () => {
      // Stopped once the trap is set, by the kill a timeout makes too: a timeout could fire before a
      // shell slowed by a busy machine got to the trap, and SIGTERM would end it.
      const controller = new AbortController();
      const pending = run(`trap '' TERM; touch trapped; ${sleeper(5)}`, {}, options, controller.signal);
      await until(() => existsSync(join(workspace, 'trapped')), { message: 'the trap to be set' });
      controller.abort();
      const result = await pending;
      expect(result.data).to.include({ killedFor: 'abort', signal: 'SIGKILL' });
      await noneLeft();
    });

    it('kills the group when the call is aborted', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      const result = await run(`${sleeper(6)} & ${sleeper(7)}`, {}, options, controller.signal);
      expect(result.data.killedFor).to.equal('abort');
      await noneLeft();
    });

    it('passes only allow-listed environment variables', async () => {
      process.env.ROUSSEAU_TEST_SECRET = 's3cret';
      try {
        expect((await run('echo "[$ROUSSEAU_TEST_SECRET]"; test -n "$PATH" && echo has-path')).content).to.equal(
          '[]\nhas-path\n[exit code 0]',
        );
        const allowed = await run('echo "[$ROUSSEAU_TEST_SECRET]"', {}, { ...options, env: ['ROUSSEAU_TEST_*'] });
        expect(allowed.content).to.equal('[s3cret]\n[exit code 0]');
      } finally {
        delete process.env.ROUSSEAU_TEST_SECRET;
      }
    });

    it('closes stdin, so a command that reads it ends at once', async () => {
      expect((await run('cat; read line; echo "got:[$line]"')).content).to.equal('got:[]\n[exit code 0]');
    });

    it('merges stdout and stderr in the order written', async () => {
      expect((await run('echo 1; echo 2 >&2; echo 3; echo 4 >&2')).content).to.equal('1\n2\n3\n4\n[exit code 0]');
    });

    it('reports the exit code and keeps the output on failure', async () => {
      const result = await run('echo partial; echo oops >&2; exit 3');
      expect(result).to.deep.include({ isError: true, content: 'partial\noops\n[exit code 3]' });
      expect(result.data.exitCode).to.equal(3);
    });

    it('reports a terminating signal', async () => {
      const result = await run('echo before; kill -USR1 $$');
      expect(result.content).to.equal('before\n[terminated by SIGUSR1]');
      expect(result.data.signal).to.equal('SIGUSR1');
    });

    it('keeps head and tail of long output without killing a command that ends', async () => {
      const result = await run('seq 1 100000', {}, { ...options, maxOutputBytes: 2000 });
      expect(result.isError).to.equal(false);
      expect(result.content).to.match(/^1\n2\n3\n/);
      expect(result.content).to.match(/\n99999\n100000\n\[exit code 0\]$/);
      expect(result.content).to.include('bytes of output omitted');
    });

    it('runs in the workspace', async () => {
      expect((await run('pwd')).content).to.equal(`${workspace}\n[exit code 0]`);
    });

    it('through the host: a call, then host.close() ends a background job', async () => {
      const host = await createHost({
        cwd: workspace,
        config: { builtins: [{ name: 'shell', options }], policy: { default: 'allow' } },
        audit: false,
      });
      const result = await host.call('bash', { command: `${sleeper(8)} & echo started` });
      expect(result.isError).to.equal(false);
      expect(result.content).to.match(/^started\n\[exit code 0\]/);
      // `&` forks before `echo`, but the fork may not have exec'd the sleep yet: wait for it to show.
      await until(() => processesRunning(sleeper(8)).length === 1, {
        timeoutMs: 10_000,
        message: 'the background sleep',
      });
      await host.close();
      await noneLeft();
    });

    it('through the host: timeout_ms kills the command', async () => {
      const host = await createHost({
        cwd: workspace,
        config: { builtins: [{ name: 'shell', options }], policy: { default: 'allow' } },
        audit: false,
      });
      try {
        const result = await host.call('bash', { command: `${sleeper(9)}`, timeout_ms: 200 });
        expect(result).to.include({ isError: true, code: 'tool_error' });
        expect(result.content).to.include('[killed: timed out after 200 ms]');
      } finally {
        await host.close();
      }
    });
  });
