// The host-wide watchdog (core/sandbox/watchdog.ts): whatever a worker plugin or the shell tool
// started ends with the host, however the host dies, SIGKILL included. The host runs as a child
// process of the test (from dist/, as the bin does) and is killed four ways.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIXTURES, ROOT, tempDir, until } from '../helpers.ts';
import { processesMatching } from '../plugins/shell/procs.ts';

/** Alive and not a zombie. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

const DEATHS = ['process.exit', 'an uncaught throw', 'SIGTERM', 'SIGKILL'] as const;

describe('watchdog: nothing a plugin started outlives the host', function () {
  this.timeout(90_000);

  for (const death of DEATHS) {
    it(`a worker plugin's children and a background command end when the host dies by ${death}`, async () => {
      const tmp = tempDir();
      const mark = `${process.pid}${Date.now() % 100000}${DEATHS.indexOf(death)}`;
      // The host starts a worker plugin's processes and a bash background job, prints their pids,
      // then dies the way it is told on stdin (or is killed from here).
      const script = `
        const { createHost } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'index.js')).href)});
        const host = await createHost({ cwd: ${JSON.stringify(tmp.dir)}, audit: false, logLevel: 'error', approve: () => true,
          config: { builtins: ['shell'], plugins: [{ module: ${JSON.stringify(join(FIXTURES, 'faults', 'faulty.ts'))}, loadTimeoutMs: 60000 }] } });
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
        const pids = await until(() => (out.includes('\n') ? (JSON.parse(out.split('\n')[0]!) as Record<string, number>) : undefined), { timeoutMs: 60_000, message: () => `the pids from the host (stderr: ${err})` });
        const ours = [...Object.values(pids), ...processesMatching(mark).filter((pid) => pid !== host.pid)];
        expect(ours).to.have.length(4);
        expect(ours.every(running)).to.equal(true);
        if (death === 'process.exit') host.stdin.write('exit\n');
        else if (death === 'an uncaught throw') host.stdin.write('throw\n');
        else host.kill(death);
        await until(() => host.exitCode !== null || host.signalCode !== null, { timeoutMs: 10_000, message: 'the host to die' });
        await until(() => ours.every((pid) => !running(pid)), { timeoutMs: 10_000, message: () => `every process of ${JSON.stringify(ours)} to end (left: ${ours.filter(running).join(', ')})` });
      } finally {
        host.kill('SIGKILL');
        tmp.cleanup();
      }
    });
  }
});
