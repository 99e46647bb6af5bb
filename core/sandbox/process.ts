/**
 * A plugin in a child process of its own (`isolation: 'process'`): an OS boundary a thread does not
 * have. `process.kill(process.pid)`, a native crash, `process.chdir` or off-heap growth end or change
 * that process only. It leads its own process group, so killing it takes whatever it started too,
 * and a terminal's Ctrl-C reaches the host alone.
 */
import { spawn } from 'node:child_process';
import { messageOf } from '../errors.ts';
import { FROM_SOURCE } from '../paths.ts';
import { killProcessGroup } from './child-processes.ts';
import type { StartIsolate } from './isolate.ts';
import { ENTRY_FILE, entryFromSource } from './thread.ts';
import type { ToWorker } from './worker-protocol.ts';

/** What V8 prints when a heap reaches `--max-old-space-size`, just before it aborts the process. */
const OUT_OF_MEMORY = /JavaScript heap out of memory|Reached heap limit/;

export const startProcess: StartIsolate = (data, spec, events) => {
  const entry = FROM_SOURCE ? ['-e', entryFromSource()] : [ENTRY_FILE];
  const child = spawn(process.execPath, [`--max-old-space-size=${spec.memoryMb}`, ...entry], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    serialization: 'advanced', // structured clone, as between threads: the same results cross
    detached: true,
  });
  let gone = false;
  // What the plugin prints goes to the host's stderr: stdout carries --json output and MCP messages.
  child.stdout!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  child.stderr!.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    if (OUT_OF_MEMORY.test(chunk.toString())) events.fault({ kind: 'memory' });
  });
  child.on('message', events.message);
  child.on('error', (error) => {
    // Only a process that never started has nothing to kill; 'exit' does not follow then.
    if (child.pid !== undefined || gone) return;
    gone = true;
    events.fault({ kind: 'error', reason: `its process could not be started: ${messageOf(error)}` });
    events.exit(null, null);
  });
  child.on('exit', (code, signal) => {
    gone = true;
    events.exit(code, signal);
  });
  const handles = [child, child.channel, child.stdout, child.stderr] as ({ ref?(): void; unref?(): void } | null | undefined)[];
  for (const handle of handles) handle?.unref?.();
  const send = (message: ToWorker) => {
    if (!gone && child.connected) child.send(message);
  };
  try {
    child.send({ type: 'init', data } satisfies ToWorker); // options that cannot be cloned throw here, as in `new Worker`
  } catch (error) {
    killProcessGroup(child.pid!);
    throw error;
  }
  return {
    noun: 'process',
    send,
    kill: () => {
      if (!gone && child.pid !== undefined) killProcessGroup(child.pid);
    },
    ref: () => {
      for (const handle of handles) handle?.ref?.();
    },
  };
};
