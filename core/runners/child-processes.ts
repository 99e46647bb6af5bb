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
import { isHostOwned, isKillableGroup, unwatch, watch } from './watchdog.ts';
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

/**
 * Host side: takes an isolate's `child` report into `owned` (its children still running), and has the
 * watchdog cover it; false for one to ignore. The plugin's code can post a report of its own, and
 * the host kills what is reported when the isolate ends: only the isolate's own child is taken,
 * checked with the OS as the report arrives (the entry sends it as the spawn returns, so the child
 * is still there, or a zombie). A worker's children are the host's too: one must also lead its own
 * group, as the entry makes each, and be no process the host started or watches for another.
 */
export function takeReported(message: FromWorker, isolatePid: number, owned: Set<number>): boolean {
  if (message.type !== 'child') return true;
  const { pid } = message;
  if (message.exited) {
    if (!owned.delete(pid)) return false;
    unwatch(pid);
    return true;
  }
  if (!isKillableGroup(pid) || owned.has(pid) || isHostOwned(pid)) return false;
  const found = parentAndGroup(pid);
  if (found?.parent !== isolatePid || (isolatePid === process.pid && found.group !== pid)) return false;
  owned.add(pid);
  watch(pid);
  return true;
}

/** Whether /proc describes processes here (Linux); taken at the first report. */
let hasProc: boolean | undefined;

/** The parent and process group of `pid`, from /proc (Linux) or `ps` (macOS); undefined when it is gone. */
function parentAndGroup(pid: number): { parent: number; group: number } | undefined {
  const { readFileSync, existsSync } = process.getBuiltinModule('node:fs');
  let fields: string[];
  hasProc ??= existsSync('/proc/self/stat');
  if (hasProc) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    } catch {
      return undefined;
    }
    // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses, so read after its last ')'
    fields = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .slice(1, 3);
  } else {
    const ps = process
      .getBuiltinModule('node:child_process')
      .spawnSync('ps', ['-o', 'ppid=,pgid=', '-p', String(pid)], { encoding: 'utf8' });
    fields = (ps.stdout ?? '').trim().split(/\s+/);
  }
  const [parent, group] = fields.map(Number);
  return Number.isSafeInteger(parent) && Number.isSafeInteger(group) ? { parent: parent!, group: group! } : undefined;
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
