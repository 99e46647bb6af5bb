/** A plugin in a worker thread of the host's process: cheap to start, shares the host's pid. */
import type { Worker, WorkerOptions } from 'node:worker_threads';
import { messageOf } from '../errors.ts';
import { takeReported } from './child-processes.ts';
import { BUNDLED, ENTRY_FILE, entryFromSource, type Isolate, type IsolateFault, type StartIsolate } from './isolate.ts';
import { UNHANDLED_REJECTION, type FromWorker, type ToWorker, type WorkerData } from './worker-protocol.ts';

/**
 * How long a stopped worker may still run so that its event loop reaps the children the host has
 * just killed. Node waits for a child only in the event loop that spawned it, so one that dies after
 * its worker ended stays a zombie of the host until the host exits. A worker whose loop turns is
 * terminated as soon as it has answered a ping and reaped every child (22 ms at most over 56 stops
 * on a machine at load 5); only one stuck in synchronous code, which cannot reap, waits this long.
 */
const REAP_MS = 250;

export const startThread: StartIsolate = (workerData, spec, events) => {
  // Shared memory, not a message: a message per call as its `execute` begins would cost the host
  // more than the rest of a round trip. The entry writes each call's id there before it runs it.
  const lastStarted = new Int32Array(new SharedArrayBuffer(4));
  const worker = newWorker({
    workerData: { ...workerData, lastStarted } satisfies WorkerData,
    // Not the host's own flags: some make a worker fail at once (`--input-type` of `node -e`), and
    // none of them is the plugin's business.
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: spec.memoryMb },
    // A plugin's console.log must not reach the host's stdout: it carries --json output and MCP messages.
    stdout: true,
  });
  worker.stdout.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  worker.unref();
  const children = new Set<number>();
  // Pings not answered yet: the runner's (isolated.ts) and the one `kill` sends.
  let unanswered = 0;
  let terminate: (() => void) | undefined;
  const ping = () => {
    unanswered++;
    worker.postMessage({ type: 'ping' } satisfies ToWorker);
  };
  const terminateIfReaped = () => {
    if (unanswered === 0 && children.size === 0) terminate?.();
  };
  worker.on('message', (message: FromWorker) => {
    if (!takeReported(message, process.pid, children)) return;
    if (message.type === 'pong') unanswered = Math.max(0, unanswered - 1); // the plugin's code can post one too
    events.message(message);
    terminateIfReaped();
  });
  worker.on('error', (error: unknown) => events.fault(faultOf(error)));
  // A message the host could not read (nested past what its deserializer takes: the entry refuses
  // to send one, the plugin's own code can) is dropped by Node: it may have been a call's result,
  // so the worker ends, naming why, rather than leave the call to time out.
  worker.on('messageerror', (error: unknown) => {
    events.fault({ kind: 'error', reason: `the worker sent a message the host could not read (${messageOf(error)})` });
    isolate.kill();
  });
  worker.on('exit', (code: number) => events.exit(code, null));
  const isolate: Isolate = {
    noun: 'worker',
    send: (message) => (message.type === 'ping' ? ping() : worker.postMessage(message)),
    // The host has killed the children it knows of by now, and kills any reported later
    // (isolated.ts). A child the worker spawned just before the stop may still be reported: the
    // worker answers the ping after every report it posted before, so none is missed by ending it
    // at its answer. A worker whose event loop still turns (a call that hangs on a promise, not a
    // loop) reaps the children and reports each, and ends when the last is reaped.
    kill: () => {
      if (terminate) return;
      // Unref'd: a worker that already exited answers no ping, and must not hold the host open.
      const timer = setTimeout(() => terminate!(), REAP_MS).unref();
      let terminated = false;
      terminate = () => {
        if (terminated) return;
        terminated = true;
        clearTimeout(timer);
        void worker.terminate();
      };
      ping();
    },
    ref: () => worker.ref(),
    lastStarted: () => Atomics.load(lastStarted, 0),
  };
  return isolate;
};

function faultOf(error: unknown): IsolateFault {
  const e = error as { code?: string; name?: string } | undefined;
  if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') return { kind: 'memory' };
  // worker-entry.ts names a rethrown unhandled rejection, and its message already says so
  return {
    kind: 'error',
    reason: e?.name === UNHANDLED_REJECTION ? messageOf(error) : `uncaught exception: ${messageOf(error)}`,
  };
}

function newWorker(options: WorkerOptions): Worker {
  // Taken at the first worker, not imported: a host of inline plugins never loads it.
  const { Worker } = process.getBuiltinModule('node:worker_threads');
  return BUNDLED ? new Worker(ENTRY_FILE, options) : new Worker(entryFromSource(), { ...options, eval: true });
}
