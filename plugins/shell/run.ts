/**
 * Runs one command: `/bin/bash -c` in its own process group, stdin closed, stdout and stderr merged
 * in order, output kept head + tail. The group is ended (SIGTERM, then SIGKILL) on timeout, on
 * runaway output and on abort. The run ends when bash exits: a background job that still holds the
 * pipe does not keep the caller waiting.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import { HeadTail } from './head-tail.ts';
import type { ProcessGroups } from './process-groups.ts';
import { sandboxed, type Sandbox } from './sandbox.ts';

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
  sandbox: Sandbox;
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
    const inSandbox = o.sandbox.kind !== 'none';
    const [file, ...args] = sandboxed(o.sandbox, ['/bin/bash', '-c', `exec 2>&1; ${o.command}`]);
    const child = spawn(file!, args, {
      cwd: o.cwd,
      // The sandbox's own processes get the scrubbed environment too: their /proc/<pid>/environ is visible inside.
      env: o.env,
      // In a sandbox, fd 3 carries the command's status (sandbox.ts): the sandbox outlives a command that left background jobs.
      stdio: ['ignore', 'pipe', 'pipe', ...(inSandbox ? (['pipe'] as const) : [])],
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

    let ended = false;
    const end = (exitCode: number | null, signal: NodeJS.Signals | null, background?: boolean) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(drain);
        child.stdout!.destroy();
        child.stderr!.destroy();
        child.stdio[3]?.destroy();
        resolve({
          output: output.text(),
          truncated: output.truncated,
          outputBytes: output.total,
          ...statusOf(exitCode, signal, inSandbox),
          ...(killedFor ? { killedFor } : {}),
          lingering: killedFor === undefined && (background ?? o.groups.alive(pgid)),
          pgid,
        });
      };
      const drain = setTimeout(finish, DRAIN_MS);
      child.once('close', finish);
    };
    child.once('exit', (exitCode, signal) => end(exitCode, signal));
    if (inSandbox)
      onStatusLine(child.stdio[3] as Readable, (line) => end(Number.parseInt(line, 10), null, line.endsWith(' bg')));
  });
}

/** Calls `onLine` with the first line `stream` carries, if it carries one. */
function onStatusLine(stream: Readable, onLine: (line: string) => void): void {
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    if (text.includes('\n')) onLine(text.slice(0, text.indexOf('\n')));
  });
}

/**
 * In a sandbox, bash (the sandbox's wrapper) says how the command ended as its exit status, where a
 * death by signal N reads 128 + N: read so, as bash itself does (an `exit 130` reads as SIGINT too).
 */
function statusOf(
  exitCode: number | null,
  signal: NodeJS.Signals | null,
  inSandbox: boolean,
): { exitCode: number | null; signal: NodeJS.Signals | null } {
  if (!inSandbox || exitCode === null || exitCode <= 128) return { exitCode, signal };
  const name = (Object.keys(constants.signals) as NodeJS.Signals[]).find(
    (s) => constants.signals[s] === exitCode - 128,
  );
  return name ? { exitCode: null, signal: name } : { exitCode, signal };
}
