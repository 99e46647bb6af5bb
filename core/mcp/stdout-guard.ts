/**
 * On stdio, stdout is the MCP channel: one stray `console.log` from a plugin (or a dependency of
 * one) corrupts the JSON-RPC stream and the client drops the connection. While guarded, every
 * write to `process.stdout` goes to stderr instead (console.log, console.info, worker threads'
 * stdout, which Node pipes into it), and only the transport holds a writer to the real stdout.
 *
 * The CLI guards stdout the same way while any command runs (an inline plugin's `console.log` would
 * otherwise land in the middle of `--json`), and writes its own output with `writeStdout`.
 * Guards nest: the CLI takes one before plugins load (they may print while loading), and
 * `startMcpStdio` (its handshake) and `serveMcpStdio` each take their own; stdout comes back when
 * the last one is released.
 *
 * What it cannot catch: writes straight to file descriptor 1 (`fs.writeSync(1, …)`) and child
 * processes spawned with inherited stdio.
 */
export interface StdoutGuard {
  /**
   * Writes to the real stdout, for the MCP transport only: the messages sent in one tick leave
   * together. Resolves at once, or once stdout has drained when it pushes back.
   */
  send(chunk: string): Promise<void>;
  /** Releases this guard; the last release puts `process.stdout.write` back. */
  restore(): void;
}

interface Redirect {
  send(chunk: string): Promise<void>;
  holders: number;
  /** Run before each write of the channel to the real stdout (the guards' `beforeWrite`). */
  beforeWrite: Set<() => void>;
  write(chunk: string): boolean;
  release(): void;
}

let active: Redirect | undefined;

const DONE = Promise.resolve();

/** Writes to the real stdout, guarded or not: for the CLI's own output. */
export function writeStdout(chunk: string): boolean {
  return active ? active.write(chunk) : process.stdout.write(chunk);
}

/**
 * `beforeWrite` runs, while this guard is held, just before each write of the channel to stdout:
 * `serveMcpStdio` writes the audit lines of the answers in it there (docs/mcp.md, "Performance").
 */
export function guardStdout(beforeWrite?: () => void): StdoutGuard {
  active ??= redirect();
  const guard = active;
  guard.holders++;
  if (beforeWrite) guard.beforeWrite.add(beforeWrite);
  let released = false;
  return {
    send: guard.send,
    restore() {
      if (released) return;
      released = true;
      if (beforeWrite) guard.beforeWrite.delete(beforeWrite);
      if (--guard.holders === 0) {
        guard.release();
        if (active === guard) active = undefined;
      }
    },
  };
}

function redirect(): Redirect {
  const stdout = process.stdout;
  const realWrite = stdout.write;
  const writeToStdout = realWrite.bind(stdout);
  const toStderr: typeof stdout.write = (chunk: string | Uint8Array, encoding?: unknown, callback?: unknown) =>
    process.stderr.write(chunk, encoding as BufferEncoding, callback as (error?: Error | null) => void);
  stdout.write = toStderr;
  // Messages sent in the same tick (the answers to a read that held several requests) leave in one
  // write: one system call instead of one each, which is most of what a round trip costs the host.
  let batch = '';
  const beforeWrite = new Set<() => void>();
  let drained: Promise<void> | undefined;
  const flush = () => {
    const chunk = batch;
    batch = '';
    for (const hook of beforeWrite) hook();
    if (!writeToStdout(chunk) && !drained && !stdout.destroyed) drained = untilDrained(stdout);
  };
  // Settles on 'close' and 'error' too: stdout whose reader is gone never drains, and the answers
  // waiting on it would hang (a destroyed one is not waited for at all).
  const untilDrained = (stream: NodeJS.WriteStream) =>
    new Promise<void>((resolve) => {
      const done = () => {
        stream.off('drain', done);
        stream.off('close', done);
        stream.off('error', done);
        drained = undefined;
        resolve();
      };
      stream.on('drain', done);
      stream.on('close', done);
      stream.on('error', done);
    });
  // Resolved at once unless stdout pushes back: waiting for each write's own callback would hold
  // the next messages back, and a burst (progress, then the result) would reach the client in one
  // read, where SDK v1 clients drop the progress (typescript-sdk#2580; the server spaces a result
  // from its progress, so a tick's batch never holds both).
  const send = (chunk: string): Promise<void> => {
    if (batch === '') process.nextTick(flush);
    batch += chunk;
    return drained ?? DONE;
  };
  return {
    send,
    holders: 0,
    beforeWrite,
    write: writeToStdout,
    release() {
      if (stdout.write === toStderr) stdout.write = realWrite;
    },
  };
}
