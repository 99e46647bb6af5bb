/**
 * A plugin in a child process of its own (`isolation: 'process'`): an OS boundary a thread does not
 * have. `process.kill(process.pid)`, a native crash, `process.chdir` or off-heap growth end or change
 * that process only. It leads its own process group, and what it starts stays in that group unless
 * it asks for a group of its own (those the entry reports, like a worker's); killing the group
 * takes the rest. A terminal's Ctrl-C reaches the host alone.
 */
import type { ChildProcess } from 'node:child_process';
import { abortable } from '../abortable.ts';
import { messageOf } from '../errors.ts';
import { killProcessGroup, takeReported } from './child-processes.ts';
import { entryScript, type StartIsolate } from './isolate.ts';
import { unwatch, watch } from './watchdog.ts';
import type { FromWorker, ToWorker } from './worker-protocol.ts';

/** What V8 prints when a heap reaches `--max-old-space-size`, just before it aborts the process. */
const OUT_OF_MEMORY = /JavaScript heap out of memory|Reached heap limit/;
/** How much of the end of the plugin's stderr is kept to tell an OOM abort from any other. */
const STDERR_TAIL = 4096;
/**
 * Sets the heap limit flag back to V8's default as the child's first act. V8 reads it once, when it
 * makes the heap, so the limit holds; but while any V8 flag differs from its default, V8 refuses the
 * code cache Node ships for its built-in modules and compiles each one the child loads from source:
 * the ~60 it loads after this line (the IPC channel's ~35 come before). Measured with callgrind, a
 * process loading the echo plugin: 841 M instructions with the flag left set, 777 M reset, 721 M never set.
 */
const KEEP_BUILTIN_CODE_CACHE = "process.getBuiltinModule('node:v8').setFlagsFromString('--max-old-space-size=0');";
/** After 'exit', how long to wait for the IPC channel and stderr to drain (their last words come after it). */
const DRAIN_MS = 250;

export const startProcess: StartIsolate = (data, spec, events) => {
  // Options that cannot be cloned fail here, before there is a process to clean up, as `new Worker` does.
  try {
    process.getBuiltinModule('node:v8').serialize({ type: 'init', data } satisfies ToWorker);
  } catch (error) {
    throw new DOMException(messageOf(error), 'DataCloneError');
  }
  // Taken at the first process, not imported: a host of inline plugins never loads it.
  const child = process
    .getBuiltinModule('node:child_process')
    .spawn(process.execPath, [`--max-old-space-size=${spec.memoryMb}`, '-e', KEEP_BUILTIN_CODE_CACHE + entryScript()], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'advanced', // structured clone, as between threads: the same results cross
      detached: true,
      env: withoutNodeOptions(process.env),
    });
  // Should the host die without killing it (SIGKILL, a crash, an exit that skips `close()`) while the
  // plugin is too busy to notice its channel closing, the host's watchdog kills its group.
  if (child.pid !== undefined) watch(child.pid);
  let exited = false;
  let stderrTail = '';
  // What the plugin prints goes to the host's stderr: stdout carries --json output and MCP messages.
  child.stdout?.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  child.stderr?.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    stderrTail = (stderrTail + chunk.toString()).slice(-STDERR_TAIL);
  });
  let lastStarted = 0;
  /**
   * Its children still running, as reported and taken (`takeReported`): they stay in this process's
   * group, unlike a worker's, which lead groups of their own.
   */
  const children = new Set<number>();
  child.on('message', (message: FromWorker) => {
    if (message.type === 'started') {
      // The plugin's code can post this too: only a number is an id (`startedBy` does arithmetic on it).
      if (typeof message.id === 'number') lastStarted = message.id;
      return;
    }
    if (takeReported(message, child.pid!, children)) events.message(message);
  });
  child.on('error', (error) => {
    // Only a process that never started has nothing to kill, and no 'exit' follows then.
    if (child.pid !== undefined || exited) return;
    exited = true;
    events.fault({ kind: 'error', reason: `its process could not be started: ${messageOf(error)}` });
    events.exit(null, null);
  });
  child.on('exit', (code, signal) => {
    exited = true;
    // What it started in its own group outlives a process that exits or crashes by itself: not here.
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // the group is empty
    }
    unwatch(child.pid!);
    // 'exit' can come before the last IPC messages (a fault, a child report) and the last of stderr.
    void drained(child).then(() => {
      if (signal === 'SIGABRT' && OUT_OF_MEMORY.test(stderrTail)) events.fault({ kind: 'memory' });
      events.exit(code, signal);
    });
  });
  const handles = [child, child.channel, child.stdout, child.stderr] as (
    | { ref?(): void; unref?(): void }
    | null
    | undefined
  )[];
  for (const handle of handles) handle?.unref?.();
  const send = (message: ToWorker) => {
    if (!exited && child.connected) child.send(message);
  };
  send({ type: 'init', data });
  return {
    noun: 'process',
    send,
    kill: () => {
      if (!exited && child.pid !== undefined) killProcessGroup(child.pid);
    },
    ref: () => {
      for (const handle of handles) handle?.ref?.();
    },
    // 'exit' is told once the channel has drained: every 'started' the process sent has come.
    lastStarted: () => lastStarted,
  };
};

/** Resolves once the channel has disconnected and stderr has ended, or after DRAIN_MS. */
function drained(child: ChildProcess): Promise<void> {
  const waits: Promise<unknown>[] = [];
  if (child.connected) waits.push(new Promise((resolve) => child.once('disconnect', resolve)));
  if (child.stderr && !child.stderr.readableEnded)
    waits.push(new Promise((resolve) => child.stderr!.once('close', resolve)));
  return abortable(Promise.all(waits), { timeoutMs: DRAIN_MS }).then(
    () => {},
    () => {},
  );
}

/** `NODE_OPTIONS` (--inspect, --import, …) is the host's business, as its execArgv is: a worker gets neither. */
function withoutNodeOptions(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _, ...rest } = env;
  return rest;
}
