/**
 * Runs one command: `/bin/bash -c` in its own process group, stdin closed, stdout and stderr merged
 * in order, output kept head + tail. The group is ended (SIGTERM, then SIGKILL) on timeout, on
 * runaway output and on abort. The run ends when bash exits: a background job that still holds the
 * pipe does not keep the caller waiting.
 */
import { spawn } from 'node:child_process';
import { HeadTail } from './head-tail.ts';
import type { ProcessGroups } from './process-groups.ts';

/** How long output already written may take to arrive after bash exits. */
const DRAIN_MS = 100;

export interface RunOptions {
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal: AbortSignal;
  maxOutputBytes: number;
  killAfterOutputBytes: number;
  killGraceMs: number;
  groups: ProcessGroups;
}

export type KillReason = 'timeout' | 'output' | 'abort';

export interface RunResult {
  output: string;
  truncated: boolean;
  outputBytes: number;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  killedFor?: KillReason;
  /** Processes of the group were still running when bash exited (background jobs). */
  lingering: boolean;
  pgid: number;
}

export function runCommand(o: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    // `exec 2>&1` first, on the command's own line (line numbers in bash's messages stay right):
    // from then on both streams share one pipe and keep their order. A syntax error on that line
    // is reported before it runs, on stderr, which is read too.
    const child = spawn('/bin/bash', ['-c', `exec 2>&1; ${o.command}`], {
      cwd: o.cwd,
      env: o.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    if (child.pid === undefined) {
      child.once('error', (error) => reject(error));
      return;
    }
    const pgid = child.pid;
    o.groups.add(pgid);
    const output = new HeadTail(o.maxOutputBytes);
    let killedFor: KillReason | undefined;
    const kill = (reason: KillReason) => {
      if (killedFor) return;
      killedFor = reason;
      o.groups.terminate(pgid, o.killGraceMs);
    };
    const onData = (chunk: Buffer) => {
      output.push(chunk);
      if (output.total > o.killAfterOutputBytes) kill('output');
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    const timer = setTimeout(() => kill('timeout'), o.timeoutMs);
    const onAbort = () => kill('abort');
    o.signal.addEventListener('abort', onAbort, { once: true });
    if (o.signal.aborted) onAbort();

    child.once('exit', (exitCode, signal) => {
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(drain);
        child.stdout!.destroy();
        child.stderr!.destroy();
        resolve({
          output: output.text(),
          truncated: output.truncated,
          outputBytes: output.total,
          exitCode,
          signal,
          ...(killedFor ? { killedFor } : {}),
          lingering: killedFor === undefined && o.groups.alive(pgid),
          pgid,
        });
      };
      const drain = setTimeout(finish, DRAIN_MS);
      child.once('close', finish);
    });
  });
}
