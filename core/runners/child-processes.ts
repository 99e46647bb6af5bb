/**
 * Child processes a worker plugin starts. A worker shares the host's pid, so a process it spawns is
 * the host's child and outlives `worker.terminate()`. Inside the worker every spawn (spawn, exec,
 * execFile, fork: they all go through `ChildProcess.prototype.spawn`) is made the leader of its own
 * process group and reported to the host, which kills the whole group when the worker ends, so the
 * grandchildren (`bash -c 'sleep 60 &'`) go too. The synchronous forms (`execSync`) block the
 * worker instead; they are not tracked (see docs/isolation.md).
 */
import type { ChildProcess } from 'node:child_process';
import { abortable } from '../abortable.ts';
import { isKillableGroup, unwatch, watch } from './watchdog.ts';
import type { FromWorker } from './worker-protocol.ts';

type SpawnFn = (this: ChildProcess, options: { detached?: boolean }) => unknown;

/**
 * Plugin side: tracks every child process; `killAll` ends their groups and waits until they are
 * reaped. With `ownGroups` each child is made to lead a process group of its own (a worker's
 * children would otherwise be in the host's group).
 */
export function trackChildProcesses(
  report: (pid: number, exited: boolean) => void,
  { ownGroups }: { ownGroups: boolean },
): { killAll(graceMs: number): Promise<void> } {
  const live = new Map<number, ChildProcess>();
  // Taken here, not imported: the host imports this module, and one of inline plugins never needs it.
  const proto = process.getBuiltinModule('node:child_process').ChildProcess.prototype as unknown as { spawn: SpawnFn };
  const spawn = proto.spawn;
  proto.spawn = function (this: ChildProcess, options) {
    if (ownGroups) options.detached = true;
    const result = spawn.call(this, options);
    const pid = this.pid;
    if (pid !== undefined) {
      live.set(pid, this);
      report(pid, false);
      this.once('exit', () => {
        live.delete(pid);
        report(pid, true);
      });
    }
    return result;
  };
  return {
    async killAll(graceMs) {
      const exits = [...live].map(([pid, child]) => {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        killProcessGroup(pid);
        return exited;
      });
      await abortable(Promise.all(exits), { timeoutMs: graceMs }).catch(() => {}); // the rest die with the isolate
    },
  };
}

/** Host side: the watchdog covers what a sandbox reports having started until it is reported gone. */
export function watchReported(message: FromWorker): void {
  if (message.type !== 'child') return;
  if (message.exited) unwatch(message.pid);
  else watch(message.pid);
}

/** SIGKILLs the process group led by `pid`, or the process alone when it leads none. Never throws. */
export function killProcessGroup(pid: number): void {
  // Reported by an isolate, so possibly forged: -1 would signal every process the user owns.
  if (!isKillableGroup(pid)) return;
  unwatch(pid);
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
