/** A plugin in a worker thread of the host's process: cheap to start, shares the host's pid. */
import { createRequire } from 'node:module';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { messageOf } from '../errors.ts';
import { FROM_SOURCE, hostFile } from '../paths.ts';
import type { IsolateFault, StartIsolate } from './isolate.ts';
import { UNHANDLED_REJECTION } from './worker-protocol.ts';

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
  worker.on('message', events.message);
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

/** The entry: its source under tsx (tests), dist/worker.js otherwise. */
export const ENTRY_FILE = hostFile('core/sandbox/worker-entry.ts', 'worker.js');

/**
 * From source, the entry is TypeScript, and a worker inherits neither tsx's hooks nor (on Node 20) a
 * `--import tsx` given in `execArgv`. It loads its entry with jiti, which it needs for the plugin
 * anyway: registering tsx there instead made a worker's start 2-4× slower (its hooks tax every
 * module loaded after them, and typebox alone is 373).
 */
export function entryFromSource(): string {
  const jiti = JSON.stringify(createRequire(import.meta.url).resolve('jiti'));
  const entry = JSON.stringify(ENTRY_FILE);
  return `require(${jiti}).createJiti(${entry}, { fsCache: true }).import(${entry});`;
}

function newWorker(options: WorkerOptions): Worker {
  return FROM_SOURCE ? new Worker(entryFromSource(), { ...options, eval: true }) : new Worker(ENTRY_FILE, options);
}
