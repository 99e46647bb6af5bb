// The host-wide watchdog (core/runners/watchdog.ts): whatever a worker plugin or the shell tool
// started ends with the host, however the host dies, SIGKILL included. The host runs as a child
// process of the test (from dist/, as the bin does) and is killed four ways.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIXTURES, ROOT, tempDir, until } from '../helpers.ts';
import { isKillableGroup } from '../../core/runners/watchdog.ts';
import { processesMatching, processesRunning, running } from '../plugins/shell/procs.ts';

const DEATHS = ['process.exit', 'an uncaught throw', 'SIGTERM', 'SIGKILL'] as const;

describe('watchdog: nothing a plugin started outlives the host', function () {
  this.timeout(90_000);

  for (const death of DEATHS) {
    it(`a worker plugin's children and a background command end when the host dies by ${death}`, async () => {
      const tmp = tempDir();
      const mark = `${process.pid}${Date.now() % 100000}${DEATHS.indexOf(death)}`;
      // The host starts a worker plugin's processes and a bash background job, prints their pids,
      // then dies the way it is told on stdin (or is killed from here). No sandbox for the command:
      // bubblewrap would end it with its parent by itself, and the watchdog is what is under test.
      const script = `
        const { createHost } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'index.js')).href)});
        const host = await createHost({ cwd: ${JSON.stringify(tmp.dir)}, audit: false, logLevel: 'error', approve: () => true,
          config: { builtins: [{ name: 'shell', options: { sandbox: 'none' } }], plugins: [{ module: ${JSON.stringify(join(FIXTURES, 'faults', 'faulty.ts'))}, loadTimeoutMs: 60000 }] } });
        const bash = await host.call('bash', { command: 'sleep 61.${mark} & echo started' });
        if (bash.isError) throw new Error(bash.content);
        void host.call('spawn', {}, { onProgress: (p) => process.stdout.write(p.message + '\\n') });
        process.stdin.once('data', (how) => {
          if (String(how).startsWith('exit')) process.exit(0);
          setTimeout(() => { throw new Error('the host throws'); });
        });`;
      const host = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = ''; // the uncaught throw's trace: kept off the test's output
      host.stdout.on('data', (d: Buffer) => (out += d.toString()));
      host.stderr.on('data', (d: Buffer) => (err += d.toString()));
      try {
        const pids = await until(
          () => (out.includes('\n') ? (JSON.parse(out.split('\n')[0]!) as Record<string, number>) : undefined),
          { timeoutMs: 60_000, message: () => `the pids from the host (stderr: ${err})` },
        );
        expect(Object.values(pids).every(running)).to.equal(true);
        expect(processesRunning(`sleep 61.${mark}`)).to.have.length(1);
        // The command's sandbox and shells too: every process whose command line holds the mark.
        const ours = [...Object.values(pids), ...processesMatching(mark).filter((pid) => pid !== host.pid)];
        if (death === 'process.exit') host.stdin.write('exit\n');
        else if (death === 'an uncaught throw') host.stdin.write('throw\n');
        else host.kill(death);
        await until(() => host.exitCode !== null || host.signalCode !== null, {
          timeoutMs: 10_000,
          message: 'the host to die',
        });
        await until(() => ours.every((pid) => !running(pid)), {
          timeoutMs: 10_000,
          message: () => `every process of ${JSON.stringify(ours)} to end (left: ${ours.filter(running).join(', ')})`,
        });
      } finally {
        host.kill('SIGKILL');
        tmp.cleanup();
      }
    });
  }
});

describe('no zombie children: every process the host started and ended is reaped', function () {
  this.timeout(120_000);

  it('after many killed, cancelled and lingering commands, plugin-process restarts and worker stops, the host has 0 zombie children', async () => {
    const tmp = tempDir();
    const mark = `${process.pid}${Date.now() % 100000}z`;
    // The host counts its own zombie children (state Z, parent its pid) once the calls are done.
    const script = `
      const { readdirSync, readFileSync } = await import('node:fs');
      const { createHost } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'index.js')).href)});
      const host = await createHost({ cwd: ${JSON.stringify(tmp.dir)}, audit: false, logLevel: 'error', approve: () => true,
        config: { builtins: [{ name: 'shell', options: { killGraceMs: 100 } }], isolation: { quarantine: { failures: 1000 } },
          plugins: [{ module: ${JSON.stringify(join(FIXTURES, 'faults', 'faulty.ts'))}, isolation: 'process', loadTimeoutMs: 60000 }] } });
      const calls = [];
      for (let i = 0; i < 10; i++) {
        calls.push(host.call('bash', { command: 'sleep 31.${mark} & sleep 32.${mark}', timeout_ms: 100 }));
        calls.push(host.call('bash', { command: 'trap "" TERM; sleep 33.${mark}', timeout_ms: 100 }));
        calls.push(host.call('bash', { command: 'kill -USR1 $$' }));
        calls.push(host.call('bash', { command: 'sleep 0.2 & echo lingers' }));
      }
      const cancel = new AbortController();
      calls.push(host.call('bash', { command: 'sleep 34.${mark}' }, { signal: cancel.signal }));
      setTimeout(() => cancel.abort(), 200);
      await Promise.all(calls);
      for (let i = 0; i < 3; i++) {
        await host.call('block', {});
        await host.call('exit', { code: 3 });
      }
      // A worker stopped for a call that hangs (a promise, not a loop) while its children run.
      const workers = await createHost({ cwd: ${JSON.stringify(tmp.dir)}, audit: false, logLevel: 'error', approve: () => true,
        config: { builtins: false, isolation: { quarantine: { failures: 1000 } },
          plugins: [{ module: ${JSON.stringify(join(FIXTURES, 'faults', 'faulty.ts'))}, timeoutMs: 1000, loadTimeoutMs: 60000 }] } });
      for (let i = 0; i < 3; i++) await workers.call('spawn', {});
      await new Promise((resolve) => setTimeout(resolve, 1500)); // the lingering jobs end
      const zombieChildren = () => {
        const zombies = [];
        for (const entry of readdirSync('/proc')) {
          if (!/^\\d+$/.test(entry)) continue;
          try {
            const stat = readFileSync('/proc/' + entry + '/stat', 'utf8');
            const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
            if (state === 'Z' && Number(ppid) === process.pid) zombies.push(stat.slice(0, stat.lastIndexOf(')') + 1));
          } catch {}
        }
        return zombies;
      };
      // A child that has just ended is a zombie until the event loop reaps it (later on a busy
      // machine); a leaked one stays one: look again for up to 10 s.
      let zombies = zombieChildren();
      for (const until = Date.now() + 10_000; zombies.length > 0 && Date.now() < until; zombies = zombieChildren())
        await new Promise((resolve) => setTimeout(resolve, 100));
      process.stdout.write(JSON.stringify(zombies) + '\\n');
      await Promise.all([host.close(), workers.close()]);`;
    const host = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    host.stdout.on('data', (d: Buffer) => (out += d.toString()));
    host.stderr.on('data', (d: Buffer) => (err += d.toString()));
    try {
      const zombies = await until(
        () => (out.includes('\n') ? (JSON.parse(out.split('\n')[0]!) as string[]) : undefined),
        { timeoutMs: 100_000, message: () => `the host's count (stderr: ${err})` },
      );
      expect(zombies).to.deep.equal([]);
      await until(() => processesMatching(mark).filter((pid) => pid !== host.pid).length === 0, {
        timeoutMs: 10_000,
        message: 'every command to end',
      });
    } finally {
      host.kill('SIGKILL');
      tmp.cleanup();
    }
  });
});

describe('watchdog: a closed host leaves no process of its own', function () {
  this.timeout(60_000);

  it('the watchdog runs while a plugin process does, and ends when the host closes', async () => {
    const tmp = tempDir();
    // In a process of its own: the watchdog is one per process, and other tests' hosts share this one.
    const script = `
      import { readdirSync, readFileSync } from 'node:fs';
      const { createHost } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'index.js')).href)});
      const watchdogs = () => readdirSync('/proc').filter((e) => /^\\d+$/.test(e)).filter((pid) => {
        try {
          const stat = readFileSync('/proc/' + pid + '/stat', 'utf8');
          const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          return state !== 'Z' && Number(ppid) === process.pid && readFileSync('/proc/' + pid + '/cmdline', 'utf8').includes('while read -r op');
        } catch { return false; }
      }).length;
      const host = await createHost({ cwd: ${JSON.stringify(tmp.dir)}, audit: false, logLevel: 'error',
        config: { builtins: false, plugins: [{ module: ${JSON.stringify(join(FIXTURES, 'plugins', 'echo.ts'))}, isolation: 'process' }] } });
      const open = watchdogs();
      await host.close();
      let closed = watchdogs();
      for (let i = 0; i < 50 && closed > 0; i++) { await new Promise((r) => setTimeout(r, 100)); closed = watchdogs(); }
      process.stdout.write(JSON.stringify({ open, closed, loaded: host.plugins().map((p) => p.status) }));`;
    try {
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let text = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (text += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`exit ${code}: ${err}`))));
      });
      const { open, closed } = JSON.parse(out) as { open: number; closed: number };
      expect(open, out).to.equal(1);
      expect(closed, out).to.equal(0);
    } finally {
      tmp.cleanup();
    }
  });
});

describe('watchdog: pids an isolate reports', () => {
  it('kills only a real group of another process: never every process (-1), its own group (0), init or the host', () => {
    for (const pid of [-1, 0, 1, process.pid, 1.5, Number.NaN, 2 ** 53, '42'])
      expect(isKillableGroup(pid), String(pid)).to.equal(false);
    expect(isKillableGroup(process.pid + 1)).to.equal(true);
  });
});
