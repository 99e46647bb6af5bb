// Loaded into every process of a `scripts/test-cpu.sh` run (NODE_OPTIONS=--import): appends to
// $TEST_CPU_LOG one JSON line per process at its end (exit, or a stop signal: the hosts and
// servers the tests kill never exit by themselves), and, in the mocha workers, one per child
// process (its CPU and its descendants', from /proc's cutime at its exit: Node reaps it then) and
// one per worker thread, each named with the test file that started it (hooks.cjs). Measurement
// only: nothing in the product or the tests loads it.
import { appendFileSync, readFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const out = process.env.TEST_CPU_LOG;
if (isMainThread && out) {
  const require = createRequire(import.meta.url);
  const argv = process.argv.slice(1).join(' ').slice(0, 300);
  const log = (record) => appendFileSync(out, `${JSON.stringify({ pid: process.pid, argv, ...record })}\n`);
  const cpu = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
  };
  /** CPU seconds of the children this process has reaped so far (cutime + cstime, in 1/100 s). */
  const reaped = () => {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  };
  process.on('exit', () => log({ rec: 'proc', why: 'exit', cpu: cpu() }));
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    const onSignal = () => {
      log({ rec: 'proc', why: signal, cpu: cpu() });
      // Alone, this listener would keep the process alive: die of the signal, as without it.
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
  let lastReaped = reaped();
  const childProcess = require('node:child_process');
  const spawn = childProcess.ChildProcess.prototype.spawn;
  childProcess.ChildProcess.prototype.spawn = function (options) {
    const started = spawn.call(this, options);
    const file = globalThis.__testCpuFile;
    const args = (options.args ?? []).join(' ').slice(0, 300);
    this.once('exit', (_code, signal) => {
      const now = reaped();
      log({ rec: 'child', file, args, signal, cpu: now - lastReaped });
      lastReaped = now;
    });
    return started;
  };
  const threads = require('node:worker_threads');
  const Worker = threads.Worker;
  threads.Worker = class extends Worker {
    constructor(entry, options) {
      super(entry, options);
      log({ rec: 'thread', file: globalThis.__testCpuFile, entry: options?.eval ? 'eval' : String(entry).slice(-80) });
    }
  };
  syncBuiltinESMExports();
}
