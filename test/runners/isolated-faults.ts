// The fault-injection suites of the isolated runner, run against real worker threads and real plugin
// processes: each way a plugin can fail while loading or running ("case N" is each fault's stable
// name, also in the fixture faults/faulty.ts). After every fault the host must still serve another
// plugin's call ("the bystander"). One test file per isolation and suite (or part of one), so they
// run in parallel.
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type winston from 'winston';
import type { HostConfig } from '../../core/config-schema.ts';
import { createHost, type Host } from '../../core/host.ts';
import type { CallResult } from '../../core/types.ts';
import { capturingLogger, capturingStderr, FIXTURES, tempDir, until } from '../helpers.ts';
import { running } from '../plugins/shell/procs.ts';

export const FAULTS = join(FIXTURES, 'faults');
export const fault = (file: string) => join(FAULTS, file);
/** Loads can be slow when the machine is busy; only the load-timeout tests use a short one. */
export const LOAD_MS = 60_000;
export const BYSTANDER = { module: fault('echo-worker.ts'), loadTimeoutMs: LOAD_MS };

export function makeHost(
  plugins: NonNullable<HostConfig['plugins']>,
  extra: Partial<HostConfig> = {},
  logger?: winston.Logger,
  audit: string | false = false,
  clock?: () => number,
): Promise<Host> {
  return createHost({
    cwd: FAULTS,
    audit,
    logLevel: logger?.level ?? 'error',
    ...(logger ? { logger } : {}),
    ...(clock ? { clock } : {}),
    approve: () => true,
    config: { builtins: false, plugins, ...extra },
  });
}

export async function bystanderServes(host: Host): Promise<void> {
  const result = await host.call('say', { text: 'still here' });
  expect(result, result.content).to.include({ isError: false, content: 'still here' });
}

export function expectFailure(result: CallResult, code: string, pattern: RegExp): void {
  expect(result.isError, result.content).to.equal(true);
  expect(result.code, result.content).to.equal(code);
  expect(result.content).to.match(pattern);
}

/** Loading faults, options that cannot cross, and execution faults (cases 1–3, 8–12, 14, 21, 22). */
export function loadingAndExecutionFaults(isolation: 'worker' | 'process'): void {
  describe(`${isolation} runner: loading faults (cases 1–3)`, function () {
    this.timeout(90_000);

    it('fails the plugin that throws, never settles or loops while loading, on time, and serves the others', async () => {
      const host = await makeHost([
        { module: fault('import-throws.ts'), loadTimeoutMs: LOAD_MS, isolation },
        { module: fault('import-hang.ts'), loadTimeoutMs: LOAD_MS, isolation },
        { module: fault('import-loop.ts'), loadTimeoutMs: 1_000, isolation },
        BYSTANDER,
      ]);
      try {
        const byFile = new Map(host.plugins().map((p) => [p.source.split('/').pop(), p]));

        const throws = byFile.get('import-throws.ts')!;
        expect(throws.status).to.equal('failed');
        expect(throws.isolation).to.equal(isolation);
        expect(throws.error?.code).to.equal('RH_ERR_PLUGIN_IMPORT');
        expect(throws.error?.message).to.include('import-throws.ts').and.include('broken at import time');

        // A top-level await that waits on nothing ends its worker or process at once: a crash, not the 60 s load timeout.
        const hang = byFile.get('import-hang.ts')!;
        expect(hang.status).to.equal('failed');
        expect(hang.error?.code).to.equal('RH_ERR_PLUGIN_CRASHED');
        expect(hang.error?.message).to.include('before the plugin finished loading');

        const loop = byFile.get('import-loop.ts')!;
        expect(loop.status).to.equal('failed');
        expect(loop.error?.code).to.equal('RH_ERR_PLUGIN_LOAD_TIMEOUT');
        // The loop never ends: its load timeout could fire only because it spun in its worker or process,
        // not on the host thread.
        expect(loop.error?.message).to.include('1000 ms');

        await bystanderServes(host);
      } finally {
        await host.close();
      }
    });
  });

  describe(`${isolation} runner: options`, function () {
    this.timeout(60_000);

    it('fails a plugin whose options cannot cross to its isolate, naming them, and serves the others', async () => {
      const host = await makeHost([
        { module: fault('faulty.ts'), isolation, loadTimeoutMs: LOAD_MS, options: { format: () => 'x' } as never },
        BYSTANDER,
      ]);
      try {
        const [faulty] = host.plugins();
        expect(faulty).to.include({ status: 'failed', isolation });
        expect(faulty!.error?.code).to.equal('RH_ERR_PLUGIN_OPTIONS');
        expect(faulty!.error?.message)
          .to.include('faulty.ts')
          .and.include('options are invalid')
          .and.include('could not be cloned')
          .and.include('plain data');
        await bystanderServes(host);
      } finally {
        await host.close();
      }
    });
  });

  describe(`${isolation} runner: execution faults (cases 8–12, 14, 21, 22)`, function () {
    this.timeout(60_000);
    let host: Host;
    const { logger, lines } = capturingLogger('info');

    before(async function () {
      this.timeout(120_000);
      host = await makeHost(
        [{ module: fault('faulty.ts'), timeoutMs: 30_000, memoryMb: 64, loadTimeoutMs: LOAD_MS, isolation }, BYSTANDER],
        { isolation: { quarantine: { failures: 1_000 } } }, // faults on purpose, many of them: never quarantine here
        logger,
      );
      expect(host.plugins().map((p) => [p.name, p.status, p.isolation])).to.deep.equal([
        ['faulty', 'loaded', isolation],
        ['bystander', 'loaded', 'worker'],
      ]);
    });
    after(() => host?.close());

    const count = async () => {
      const result = await host.call('count', {});
      expect(result.isError, result.content).to.equal(false);
      return Number(result.content);
    };

    it('a rejecting execute is a tool_error with its message, and the same instance stays in use', async () => {
      const before = await count();
      expectFailure(await host.call('reject', { message: 'no such city' }), 'tool_error', /failed: no such city$/);
      expect(await count()).to.equal(before + 1);
      await bystanderServes(host);
    });

    it('a call that never settles times out, and the next call gets a fresh instance', async () => {
      await count();
      expectFailure(await host.call('hang', {}), 'timeout', /timed out after 1000 ms/);
      expect(await count()).to.equal(1);
      await bystanderServes(host);
    });

    it('a synchronous loop is killed at its timeout while other plugins answer meanwhile', async () => {
      await count();
      const order: string[] = [];
      const spinning = host.call('spin', {}).finally(() => order.push('spin'));
      await new Promise((resolve) => setTimeout(resolve, 200));
      await bystanderServes(host);
      order.push('bystander');
      const spin = await spinning;
      expectFailure(spin, 'timeout', /timed out after 1000 ms/); // the loop never ends: only the timeout answers
      expect(order).to.deep.equal(['bystander', 'spin']);
      expect(await count()).to.equal(1); // a fresh instance: the spinning one was killed
    });

    it('a read-only call whose own code ends its isolate runs once, not again: it would end the next one too', async () => {
      const dir = tempDir();
      const file = join(dir.dir, 'runs');
      expectFailure(
        await host.call('exit_readonly', { file }),
        'crashed',
        new RegExp(
          `^Tool "exit_readonly" crashed: the ${isolation} exited with code 3\\. The plugin was restarted; you may retry once\\.$`,
        ),
      );
      expect(readFileSync(file, 'utf8')).to.equal('ran\n');
      dir.cleanup();
      await bystanderServes(host);
    });

    it('a catastrophic regex is killed like a loop', async () => {
      await count();
      expectFailure(await host.call('regex', {}), 'timeout', /timed out after 1000 ms/);
      expect(await count()).to.equal(1);
      await bystanderServes(host);
    });

    it('a heap bomb ends its isolate with a crash naming the memory limit; the host stays bounded', async () => {
      const rss = process.memoryUsage().rss;
      const { value: bombed, stderr } = await capturingStderr(() => host.call('heap_bomb', {}));
      expectFailure(bombed, 'crashed', /ran out of memory: its heap reached the limit of 64 MiB \(memoryMb/);
      // A plugin process's stderr reaches the host's (V8's fatal trace included); a worker prints none.
      if (isolation === 'process') expect(stderr).to.include('JavaScript heap out of memory');
      expect(process.memoryUsage().rss - rss).to.be.below(512 * 1024 * 1024);
      expect(await count()).to.equal(1);
      await bystanderServes(host);
    });

    it('process.exit(n) ends only the isolate; the call is crashed with the exit code', async () => {
      expectFailure(await host.call('exit', { code: 7 }), 'crashed', /exited with code 7/);
      expect(await count()).to.equal(1);
      await bystanderServes(host);
    });

    it('a result that is not plain data is a clear tool_error, never a silently changed value', async () => {
      const expected: Record<string, RegExp> = {
        function: /cannot be sent to the host: at \/data\/fn is a function/,
        bigint: /at \/data\/n is a BigInt \(10n\)/,
        circular: /at \/data\/self is a circular reference/,
        error: /at \/data is an Error \("returned, not thrown"\); throw it instead/,
        map: /at \/data is a Map object, not plain JSON data/,
        nan: /at \/data\/n is NaN/,
      };
      for (const [kind, pattern] of Object.entries(expected)) {
        expectFailure(await host.call('returns', { kind }), 'tool_error', pattern);
      }
      await bystanderServes(host);
    });

    it('a 50 MB result is capped (head and tail kept), and a log flood is rate-limited', async () => {
      const big = await host.call('big', { bytes: 50 * 1024 * 1024 });
      expect(big.isError).to.equal(false);
      expect(big.truncated).to.equal(true);
      expect(big.content.startsWith('HEAD')).to.equal(true);
      expect(big.content.endsWith('TAIL')).to.equal(true);
      expect(big.content.length).to.be.below(1024 * 1024);

      const before = lines.length;
      expect(await host.call('flood', { lines: 100_000 })).to.include({ isError: false, content: 'flooded' });
      await until(() => lines.some((l) => /dropped \d+ log lines and progress reports/.test(l.message)), {
        timeoutMs: 10_000,
        message: 'the dropped-lines warning',
      });
      const relayed = lines.slice(before).filter((l) => l.message.startsWith('line '));
      expect(relayed.length).to.be.above(0).and.at.most(1_500);
      await bystanderServes(host);
    });

    it('a thrown value whose message cannot be read is a tool_error, and the isolate stays', async () => {
      const before = await count();
      expectFailure(await host.call('throw_unreadable', { kind: 'getter' }), 'tool_error', /cannot be read/);
      expectFailure(await host.call('throw_unreadable', { kind: 'proxy' }), 'tool_error', /cannot be read/);
      expectFailure(await host.call('throw_unreadable', { kind: 'to_string' }), 'tool_error', /cannot be read/);
      expectFailure(await host.call('throw_unreadable', { kind: 'symbol' }), 'tool_error', /Symbol\(not a string\)/);
      expect(await count()).to.equal(before + 1);
    });

    it('a cancellation fires ctx.signal inside the isolate with an AbortError, and keeps the isolate', async () => {
      const dir = tempDir();
      try {
        const file = join(dir.dir, 'reason');
        const before = await count();
        const controller = new AbortController();
        const pending = host.call('abortable', { file }, { signal: controller.signal });
        await new Promise((resolve) => setTimeout(resolve, 300));
        controller.abort();
        expect((await pending).code).to.equal('cancelled');
        await until(() => existsSync(file) && readFileSync(file, 'utf8'), {
          timeoutMs: 10_000,
          message: `the plugin to write ${file}`,
        });
        expect(readFileSync(file, 'utf8')).to.equal('AbortError');
        expect(await count()).to.equal(before + 1);
      } finally {
        dir.cleanup();
      }
    });
  });
}

/**
 * The calls in flight when an isolate dies (cases 16, 23), in two parts: two test files that run side by
 * side, since most of their time is spent waiting for sleeps and timeouts to run out.
 */
export function callsInFlight(isolation: 'worker' | 'process', part: 1 | 2): void {
  describe(`${isolation} runner: the calls in flight when an isolate dies (part ${part} of 2)`, function () {
    this.timeout(90_000);
    // Each test starts clean: which tools have faulted before decides where a call runs.
    let host: Host;
    const { logger, lines } = capturingLogger('info');

    beforeEach(async function () {
      this.timeout(120_000);
      host = await makeHost(
        [{ module: fault('faulty.ts'), timeoutMs: 30_000, loadTimeoutMs: LOAD_MS, isolation }, BYSTANDER],
        { isolation: { quarantine: { failures: 1_000 } } },
        logger,
      );
    });
    afterEach(() => host?.close());

    const count = async () => {
      const result = await host.call('count', {});
      expect(result.isError, result.content).to.equal(false);
      return Number(result.content);
    };

    if (part === 1) {
      for (const [kind, said] of [
        ['rejection', 'unhandled rejection: late rejection'],
        ['throw', 'uncaught exception: late throw'],
      ] as const) {
        it(`a stray ${kind} after returning: the result stands, the fault is the plugin's, the instance is recycled`, async () => {
          await count();
          const result = await host.call('stray', { kind });
          expect(result).to.include({ isError: false, content: 'returned' });
          await until(
            () => lines.some((l) => l.level === 'warn' && l.message.includes(`plugin faulty crashed: ${said}`)),
            { timeoutMs: 10_000, message: 'the crash warning' },
          );
          expect(await count()).to.equal(1);
          await bystanderServes(host);
        });
      }

      it('when one call times out, the started calls in flight with it get crashed, deterministically, naming it, and are not retried', async () => {
        await count();
        const a = host.call('sleep', { ms: 8_000 });
        const b = host.call('sleep', { ms: 8_000 });
        const block = host.call('block', {});
        expectFailure(await block, 'timeout', /timed out after 1000 ms/);
        for (const result of await Promise.all([a, b])) {
          expectFailure(
            result,
            'crashed',
            new RegExp(
              `^Tool "sleep" crashed: another call's fault: the plugin's ${isolation} was stopped because a call to "block" timed out after 1000 ms; this call was cut off with it and not retried, since it may already have had side effects`,
            ),
          );
        }
        expect(await count()).to.equal(1);
        await bystanderServes(host);
      });

      it('a call that times out waiting on a promise, not blocking, lets the calls in flight with it finish; new calls go to a fresh isolate', async () => {
        await count();
        const old = Number((await host.call('pid', {})).content);
        const sleeping = host.call('sleep', { ms: 4_000 });
        await new Promise((resolve) => setTimeout(resolve, 300));
        expectFailure(await host.call('hang', {}), 'timeout', /timed out after 1000 ms/);
        expect(await count()).to.equal(1); // the old isolate, still finishing the sleep, takes no new call
        expect(await sleeping).to.include({ isError: false, content: 'slept 4000' });
        // Once drained, the old isolate ends: a process's pid is its own to watch.
        if (isolation === 'process') await until(() => !running(old), { message: `the drained process ${old} to end` });
        await bystanderServes(host);
      });

      it('a call that times out while others finish gets its ctx.signal fired with a TimeoutError in the isolate', async () => {
        const dir = tempDir();
        try {
          const file = join(dir.dir, 'reason');
          const sleeping = host.call('sleep', { ms: 4_000 });
          await new Promise((resolve) => setTimeout(resolve, 300));
          expectFailure(await host.call('abortable_short', { file }), 'timeout', /timed out after 1000 ms/);
          await until(() => existsSync(file) && readFileSync(file, 'utf8'), {
            timeoutMs: 10_000,
            message: `the plugin to write ${file}`,
          });
          expect(readFileSync(file, 'utf8')).to.equal('TimeoutError');
          expect(await sleeping).to.include({ isError: false, content: 'slept 4000' });
        } finally {
          dir.cleanup();
        }
      });

      it('a call that reached the isolate but had not started when another call killed it runs on the next isolate', async () => {
        await count();
        const block = host.call('block', {});
        await new Promise((resolve) => setTimeout(resolve, 300)); // the isolate is blocked: what comes now waits behind it
        const queued = host.call('count', {});
        expectFailure(await block, 'timeout', /timed out after 1000 ms/);
        expect(await queued).to.include({ isError: false, content: '1' }); // the first call of a fresh instance
        await bystanderServes(host);
      });

      for (const [tool, input, said] of [
        ['exit', { code: 7 }, `the ${isolation} exited with code 7`],
        ['stray', { kind: 'throw' }, 'uncaught exception: late throw'],
        ['stray', { kind: 'rejection' }, 'unhandled rejection: late rejection'],
      ] as const) {
        it(`a started call cut off by another call's crash (${said}) names that call's tool`, async () => {
          await count();
          const bystander = host.call('sleep', { ms: 8_000 });
          await new Promise((resolve) => setTimeout(resolve, 300));
          const culprit = await host.call(tool, input);
          if (tool === 'exit') expectFailure(culprit, 'crashed', new RegExp(`^Tool "exit" crashed: ${said}\\.`));
          expectFailure(
            await bystander,
            'crashed',
            new RegExp(
              `^Tool "sleep" crashed: another call's fault: a call to "${tool}" ended the plugin's ${isolation} \\(${said}\\); this call was cut off with it and not retried`,
            ),
          );
          expect(await count()).to.equal(1);
        });
      }
    } else {
      for (const tool of ['sleep_readonly', 'sleep_idempotent']) {
        it(`a started call to a tool annotated ${tool.slice(6)} runs again, once, when another call's fault kills its isolate`, async () => {
          await count();
          const rerun = host.call(tool, { ms: 3_000 });
          const plain = host.call('sleep', { ms: 3_000 });
          await new Promise((resolve) => setTimeout(resolve, 300));
          expectFailure(await host.call('block', {}), 'timeout', /timed out after 1000 ms/);
          expectFailure(await plain, 'crashed', /another call's fault: .* a call to "block" timed out/);
          // It ran again on the fresh instance: its answer counts from 1 there.
          expect(await rerun).to.include({ isError: false, content: 'slept 3000, call 1' });

          // Cut off again on its second run, it is not run a third time. (The faults come from tools
          // that have not faulted yet: "block" now runs in an isolate of its own.)
          let runs = 0;
          const twice = host.call(tool, { ms: 6_000 }, { onProgress: () => runs++ });
          await until(() => runs === 1, { message: 'the first run to start' });
          expectFailure(await host.call('block_too', {}), 'timeout', /timed out after 1000 ms/);
          await until(() => runs === 2, { timeoutMs: 20_000, message: 'the second run to start' });
          expectFailure(await host.call('exit', { code: 9 }), 'crashed', /exited with code 9/);
          expectFailure(
            await twice,
            'crashed',
            new RegExp(
              `^Tool "${tool}" crashed: another call's fault: a call to "exit" ended the plugin's ${isolation} \\(the ${isolation} exited with code 9\\); this call was cut off with it and not retried again: it had already been run a second time\\. Do not retry it\\.$`,
            ),
          );
          await bystanderServes(host);
        });
      }

      for (const [tool, input, pattern] of [
        ['exit', { code: 7 }, /exited with code 7/],
        ['block', {}, /timed out after 1000 ms/],
      ] as const) {
        it(`once "${tool}" has ended an isolate, its calls run in a second one: its next fault spares the calls to other tools`, async () => {
          expect((await host.call(tool, input)).isError).to.equal(true);
          const sleeping = host.call('sleep', { ms: 4_000 });
          await new Promise((resolve) => setTimeout(resolve, 300));
          const again = await host.call(tool, input);
          expect(again.isError).to.equal(true);
          expect(again.content).to.match(pattern);
          expect(await sleeping).to.include({ isError: false, content: 'slept 4000' });
          await bystanderServes(host);
        });
      }

      it('a timeout also kills the process groups the plugin started (no orphans)', async () => {
        let pids: { child: number; shell: number; grandchild: number } | undefined;
        const spawning = host.call('spawn', {}, { onProgress: (p) => (pids = JSON.parse(p.message!)) });
        await until(() => pids !== undefined, { timeoutMs: 20_000, message: 'the spawned pids' });
        expect(running(pids!.grandchild)).to.equal(true);
        const block = host.call('block', {}); // the plugin is blocked and cannot clean up: the host must
        expectFailure(await spawning, 'crashed', /stopped because a call to "block" timed out/);
        await block;
        await until(() => !running(pids!.child) && !running(pids!.shell) && !running(pids!.grandchild), {
          message: 'every spawned process to end',
        });
        await bystanderServes(host);
      });
    }
  });
}
