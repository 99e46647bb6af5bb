// The isolated runner beyond the per-isolation fault suites (isolated-faults.ts): a plugin process's
// OS boundary, the crash budget's quarantine, concurrency inside a worker, host shutdown, and the
// bundled host from dist/. After every fault the host must still serve another plugin's call.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { capturingLogger, ROOT, runCli, tempDir, until } from '../helpers.ts';
import { running } from '../plugins/shell/procs.ts';
import { BYSTANDER, bystanderServes, expectFailure, FAULTS, fault, LOAD_MS, makeHost } from './isolated-faults.ts';

describe('process runner: an OS boundary', function () {
  this.timeout(90_000);

  it('contains process.kill(process.pid): the plugin has a pid of its own, and its death is its own', async () => {
    const host = await makeHost([
      { module: fault('faulty.ts'), loadTimeoutMs: LOAD_MS, isolation: 'process' },
      BYSTANDER,
    ]);
    try {
      const pid = Number((await host.call('pid', {})).content);
      expect(pid).to.be.a('number').and.not.equal(process.pid);
      expectFailure(await host.call('kill_self', {}), 'crashed', /the process was killed by SIGKILL/);
      expect(running(pid)).to.equal(false);
      await bystanderServes(host);
      expect(await host.call('count', {})).to.include({ isError: false, content: '1' });
    } finally {
      await host.close();
    }
  });

  it('a plugin process that dies by itself takes what it started with it', async () => {
    const host = await makeHost([
      { module: fault('faulty.ts'), loadTimeoutMs: LOAD_MS, isolation: 'process' },
      BYSTANDER,
    ]);
    try {
      let pids: { child: number; shell: number; grandchild: number } | undefined;
      const spawning = host.call('spawn', {}, { onProgress: (p) => (pids = JSON.parse(p.message!)) });
      await until(() => pids !== undefined, { timeoutMs: 20_000, message: 'the spawned pids' });
      expectFailure(await host.call('exit', { code: 5 }), 'crashed', /exited with code 5/);
      expectFailure(await spawning, 'crashed', /exited with code 5/);
      await until(() => !running(pids!.child) && !running(pids!.shell) && !running(pids!.grandchild), {
        message: `every spawned process of ${JSON.stringify(pids)} to end`,
      });
      await bystanderServes(host);
    } finally {
      await host.close();
    }
  });

  it('a host killed outright leaves no plugin process behind, nor anything the plugin started, even while the plugin spins', async () => {
    const script = `
      const { createHost } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'index.js')).href)});
      const host = await createHost({ cwd: ${JSON.stringify(FAULTS)}, audit: false, logLevel: 'error', approve: () => true,
        config: { builtins: false, plugins: [{ module: './faulty.ts', isolation: 'process', loadTimeoutMs: ${LOAD_MS} }] } });
      const plugin = (await host.call('pid', {})).content;
      void host.call('spawn', {}, { onProgress: (p) => {
        process.stdout.write(JSON.stringify({ plugin: Number(plugin), ...JSON.parse(p.message) }) + '\\n');
        void host.call('spin', {}); // too busy to see its channel close when the host dies
      } });`;
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const pids = await until(
        () => (out.includes('\n') ? (JSON.parse(out.split('\n')[0]!) as Record<string, number>) : undefined),
        { timeoutMs: 60_000, message: 'the pids from the host' },
      );
      expect(Object.values(pids).every(running)).to.equal(true);
      await new Promise((resolve) => setTimeout(resolve, 300)); // the spin is under way
      child.kill('SIGKILL');
      await until(() => Object.values(pids).every((pid) => !running(pid)), {
        timeoutMs: 10_000,
        message: `every process of ${JSON.stringify(pids)} to end`,
      });
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('worker runner: crash loop and quarantine', function () {
  this.timeout(90_000);

  it('quarantines a plugin after N crashes in the window, fails fast, shows it, audits it, and lifts after the cooldown', async () => {
    const dir = tempDir();
    const audit = join(dir.dir, 'audit.jsonl');
    // The crash budget's clock runs ahead by `skipped`: the cooldown passes without being waited out.
    let skipped = 0;
    const host = await makeHost(
      [{ module: fault('faulty.ts'), loadTimeoutMs: LOAD_MS }, BYSTANDER],
      { isolation: { quarantine: { failures: 2, windowMs: 60_000, cooldownMs: 60_000 } } },
      capturingLogger('error').logger, // the quarantine is logged as an error: keep it off the test output
      audit,
      () => Date.now() + skipped,
    );
    try {
      expectFailure(await host.call('exit', { code: 3 }), 'crashed', /exited with code 3/);
      expectFailure(await host.call('exit', { code: 4 }), 'crashed', /exited with code 4/);

      const fast = await host.call('count', {});
      expectFailure(
        fast,
        'quarantined',
        /unavailable: 2 crashes or timeouts within 60000 ms \(last: the worker exited with code 4\)/,
      );
      const faulty = host.plugins().find((p) => p.name === 'faulty')!;
      expect(faulty.status).to.equal('quarantined');
      expect(faulty.error?.code).to.equal('quarantined');
      await bystanderServes(host);

      skipped = 30_000; // half the cooldown: still resting
      expect(host.plugins().find((p) => p.name === 'faulty')!.status).to.equal('quarantined');
      skipped = 60_000;
      expect(host.plugins().find((p) => p.name === 'faulty')!.status).to.equal('loaded');
      // The first call its new instance serves: the quarantined call never reached a worker.
      expect(await host.call('count', {})).to.include({ isError: false, content: '1' });
    } finally {
      await host.close();
    }
    const events = readFileSync(audit, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => e.event === 'plugin');
    expect(events.map((e) => [e.plugin, e.state])).to.deep.equal([
      ['faulty', 'crashed'],
      ['faulty', 'crashed'],
      ['faulty', 'quarantined'],
    ]);
    expect(events[2]!.until).to.be.a('string');
    dir.cleanup();
  });
});

describe('worker runner: maxConcurrency', function () {
  this.timeout(60_000);

  it('runs at most maxConcurrency calls at once inside the worker; a waiting call honours its own timeout', async () => {
    const host = await makeHost([
      { module: fault('slots.ts'), maxConcurrency: 2, maxQueue: 8, loadTimeoutMs: LOAD_MS },
    ]);
    try {
      const holds = Array.from({ length: 5 }, () => host.call('hold', { ms: 400 }));
      const quick = await host.call('quick', {}); // waits behind the holds for a slot, past its 300 ms
      expectFailure(quick, 'timeout', /timed out after 300 ms/);
      for (const result of await Promise.all(holds)) expect(result).to.include({ isError: false, content: '2' });
    } finally {
      await host.close();
    }
  });
});

describe('worker runner: host shutdown', function () {
  this.timeout(90_000);

  it('host.close() cancels the calls in flight and ends every worker and every process they started', async () => {
    const host = await makeHost([{ module: fault('faulty.ts'), loadTimeoutMs: LOAD_MS }, BYSTANDER]);
    let pids: { child: number; shell: number; grandchild: number } | undefined;
    const spawning = host.call('spawn', {}, { onProgress: (p) => (pids = JSON.parse(p.message!)) });
    const hanging = host.call('hang', {});
    await until(() => pids !== undefined, { timeoutMs: 20_000, message: 'the spawned pids' });
    expect([pids!.child, pids!.shell, pids!.grandchild].every(running)).to.equal(true);
    await bystanderServes(host);

    await host.close();
    expect((await spawning).code).to.equal('cancelled');
    expect((await hanging).code).to.equal('cancelled');
    await until(() => !running(pids!.child) && !running(pids!.shell) && !running(pids!.grandchild), {
      message: 'every spawned process to end',
    });
    expect((await host.call('say', { text: 'x' })).code).to.equal('cancelled');
  });
});

describe('worker runner: the bundled host', function () {
  this.timeout(90_000);

  it("starts workers clean of the host's own node flags (`node --input-type=module -e` embeds it)", () => {
    const script = `
      const { createHost } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'index.js')).href)});
      const host = await createHost({ cwd: ${JSON.stringify(FAULTS)}, audit: false, logLevel: 'error', approve: () => true,
        config: { builtins: false, plugins: [{ module: './echo-worker.ts', loadTimeoutMs: ${LOAD_MS} }] } });
      const result = await host.call('say', { text: 'from -e' });
      await host.close();
      process.stdout.write(JSON.stringify(result));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 80_000,
    });
    expect(JSON.parse(out)).to.include({ isError: false, content: 'from -e' });
  });

  it('runs a worker plugin from dist/, and what the plugin prints never reaches stdout', async () => {
    const dir = tempDir();
    try {
      writeFileSync(
        join(dir.dir, 'rousseau.config.json'),
        JSON.stringify({ builtins: false, plugins: [{ module: fault('faulty.ts'), loadTimeoutMs: LOAD_MS }] }),
      );
      const result = await runCli(['call', 'print', '{}', '--json', '--yes', '--cwd', dir.dir], { timeoutMs: 80_000 });
      expect(result.code, result.stderr).to.equal(0);
      expect(JSON.parse(result.stdout)).to.include({ tool: 'print', isError: false, content: 'printed' });
      expect(result.stderr).to.include('plugin chatter on stdout');
    } finally {
      dir.cleanup();
    }
  });
});
