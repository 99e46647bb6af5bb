/**
 * One watchdog process per host process: it SIGKILLs the process groups it was told about when the
 * host dies by any means (`process.exit`, an uncaught throw, SIGTERM, SIGKILL), which no handler in
 * the host itself can do for SIGKILL. Its stdin is a pipe only the host holds: a line `+PGID` adds a
 * group, `-PGID` drops it (it ended, or the host killed it: a pgid left behind could be recycled),
 * and end of file, which the kernel makes when the host's last descriptor closes, kills what is left.
 *
 * The groups of plugin processes, of what worker and process plugins start (child-processes.ts) and
 * of the shell tool's commands all go here. It is started on first use, in the host's main thread
 * only: a worker thread's spawns are reported to the host, which registers them.
 */
import type { ChildProcess } from 'node:child_process';

// Plain POSIX sh (dash reads a pipe a byte at a time, which is plenty for a few lines per call).
// `kill -9 -g` fails for a pid that leads no group (a child of a plugin process, in that process's
// group): then the process alone.
const SCRIPT = `groups=' '
while read -r op; do
  g=\${op#?}
  case $op in
    +*) groups="$groups$g " ;;
    -*) case $groups in *" $g "*) groups="\${groups%% $g *} \${groups#* $g }" ;; esac ;;
  esac
done
for g in $groups; do kill -9 -"$g" 2>/dev/null || kill -9 "$g" 2>/dev/null; done`;

interface State {
  process?: ChildProcess;
  groups: Set<number>;
  /** Spawns in this thread or process are reported to a host that watches them (a plugin's sandbox). */
  delegated: boolean;
}

// Kept on globalThis: a built-in plugin loaded through jiti gets a copy of this module of its own,
// and must still share the one process.
const KEY = Symbol.for('rousseau-host.watchdog');
const state: State = ((globalThis as Record<symbol, unknown>)[KEY] as State | undefined) ?? {
  groups: new Set(),
  delegated: false,
};
(globalThis as Record<symbol, unknown>)[KEY] = state;

/** Has the process group (or the process, when it leads none) killed if the host dies before `unwatch`. */
export function watch(pgid: number): void {
  // A pid comes from an isolate's report, which a plugin can forge: `kill -9 -1` would end every
  // process of the user, and 0 or the host's own pid the host.
  if (
    !isKillableGroup(pgid) ||
    !process.getBuiltinModule('node:worker_threads').isMainThread ||
    state.delegated ||
    state.groups.has(pgid)
  )
    return;
  state.groups.add(pgid);
  write(`+${pgid}\n`);
}

/** Whether `pid` is a group the host already watches, or the watchdog itself: no isolate's child to report. */
export function isHostOwned(pid: number): boolean {
  return state.groups.has(pid) || state.process?.pid === pid;
}

/** Forgets a group that ended or that the host killed itself. */
export function unwatch(pgid: number): void {
  if (!state.groups.delete(pgid)) return;
  write(`-${pgid}\n`);
}

/**
 * Ends the watchdog when it has nothing left to watch (end of file, no group to kill), so a closed
 * host leaves no process of its own behind; the next `watch` starts a new one. Called on close, not
 * on every `unwatch`: between two commands the set is empty, and a new sh per command is a cost.
 */
export function releaseIdleWatchdog(): void {
  if (state.groups.size > 0 || !state.process) return;
  const idle = state.process;
  state.process = undefined;
  idle.stdin?.end();
}

/** For a plugin's sandbox: what starts here is reported to the host, whose watchdog covers it. */
export function delegateWatching(): void {
  state.delegated = true;
}

function write(line: string): void {
  const running = state.process?.exitCode === null && state.process.signalCode === null;
  if (running) state.process!.stdin?.write(line);
  else start(); // it is told every group still watched, this change included
}

function start(): void {
  // Detached: a terminal's Ctrl-C reaches the host's group, and the watchdog must outlive the host.
  // Taken here, not imported: the host imports this module for its close, and a host that starts no
  // process does not pay for loading `node:child_process`.
  const child = process
    .getBuiltinModule('node:child_process')
    .spawn('/bin/sh', ['-c', SCRIPT], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  child.on('error', () => {}); // no /bin/sh: only the host's own handlers are left
  child.stdin?.on('error', () => {});
  child.unref();
  (child.stdin as unknown as { unref?(): void } | null)?.unref?.();
  state.process = child;
  if (state.groups.size > 0) child.stdin?.write([...state.groups].map((g) => `+${g}\n`).join(''));
}

/** A pid a kill may target: a positive integer, not init, not the host itself. */
export function isKillableGroup(pid: unknown): pid is number {
  return Number.isSafeInteger(pid) && (pid as number) > 1 && pid !== process.pid;
}
