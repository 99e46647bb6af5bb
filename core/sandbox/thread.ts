/** A plugin in a worker thread of the host's process: cheap to start, shares the host's pid. */
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { messageOf } from '../errors.ts';
import { FROM_SOURCE } from '../paths.ts';
import { watchReported } from './child-processes.ts';
import { ENTRY_FILE, entryFromSource, type IsolateFault, type StartIsolate } from './isolate.ts';
import { UNHANDLED_REJECTION, type FromWorker } from './worker-protocol.ts';

export const startThread: StartIsolate = (workerData, spec, events) => {
  const worker = newWorker({
    workerData,
    // Not the host's own flags: some make a worker fail at once (`--input-type` of `node -e`), and
    // none of them is the plugin's business.
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: spec.memoryMb },
    // A plugin's console.log must not reach the host's stdout: it carries --json output and MCP messages.
    stdout: true,
  });
  worker.stdout.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  worker.unref();
  worker.on('message', (message: FromWorker) => {
    watchReported(message);
    events.message(message);
  });
  worker.on('error', (error: unknown) => events.fault(faultOf(error)));
  worker.on('exit', (code: number) => events.exit(code, null));
  return {
    noun: 'worker',
    send: (message) => worker.postMessage(message),
    kill: () => void worker.terminate(),
    ref: () => worker.ref(),
  };
};

function faultOf(error: unknown): IsolateFault {
  const e = error as { code?: string; name?: string } | undefined;
  if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') return { kind: 'memory' };
  // worker-entry.ts names a rethrown unhandled rejection, and its message already says so
  return { kind: 'error', reason: e?.name === UNHANDLED_REJECTION ? messageOf(error) : `uncaught exception: ${messageOf(error)}` };
}

function newWorker(options: WorkerOptions): Worker {
  return FROM_SOURCE ? new Worker(entryFromSource(), { ...options, eval: true }) : new Worker(ENTRY_FILE, options);
}
