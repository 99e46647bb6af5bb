/**
 * Where an isolated plugin runs, as its runner sees it: a worker thread (thread.ts) or a child
 * process of its own (process.ts). Both run the same entry (worker-entry.ts) and speak the same
 * messages (worker-protocol.ts); they differ in what they can contain and in how they die.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FROM_SOURCE, PACKAGE_ROOT } from '../paths.ts';
import type { PluginSpec } from './runner.ts';
import type { FromWorker, ToWorker, WorkerData } from './worker-protocol.ts';

/** What an isolate that died could say about why, beyond its exit. */
export type IsolateFault = { kind: 'memory' } | { kind: 'error'; reason: string };

export interface IsolateEvents {
  message(message: FromWorker): void;
  /** Comes before `exit` when the isolate dies of a fault it can name. */
  fault(fault: IsolateFault): void;
  /** The isolate is gone: it exited with `code`, or (a process) was killed by `signal`. */
  exit(code: number | null, signal: NodeJS.Signals | null): void;
}

export interface Isolate {
  /** What the runner calls it in messages: "worker" or "process". */
  readonly noun: string;
  /** Dropped once the isolate is gone. */
  send(message: ToWorker): void;
  /** Ends it now, and (a process) everything in its process group; `exit` follows. */
  kill(): void;
  /** Isolates start unref'd, so an idle one never keeps a one-shot command alive; a clean close refs it. */
  ref(): void;
  /**
   * The id of the last call whose `execute` began (0 before any), final once `exit` was told: which
   * calls the isolate carried when it died had run (isolated.ts's re-run rule).
   */
  lastStarted(): number;
}

export type StartIsolate = (data: WorkerData, spec: PluginSpec, events: IsolateEvents) => Isolate;

/**
 * The entry both run: dist/worker.js, or from source (under tsx) its TypeScript source, unless
 * `RH_BUNDLED_WORKER=1` says dist/ is built from this very source (the test run builds it first): a
 * child started from the bundle costs ~0.2 s less CPU (typebox is one file there, not 373 modules).
 */
export const BUNDLED = !FROM_SOURCE || process.env.RH_BUNDLED_WORKER === '1';
export const ENTRY_FILE = BUNDLED
  ? join(PACKAGE_ROOT, 'dist', 'worker.js')
  : join(PACKAGE_ROOT, 'core', 'runners', 'worker-entry.ts');

/**
 * From source the entry is TypeScript, and neither a worker nor a child inherits tsx's hooks (nor,
 * on Node 20, takes `--import tsx` in a worker's `execArgv`). This script loads the entry with jiti,
 * which the entry needs for the plugin anyway: registering tsx there instead made a worker's start
 * 2-4× slower (its hooks tax every module loaded after them, and typebox alone is 373).
 */
export function entryFromSource(): string {
  const jiti = JSON.stringify(createRequire(import.meta.url).resolve('jiti'));
  const entry = JSON.stringify(ENTRY_FILE);
  return `require(${jiti}).createJiti(${entry}, { fsCache: true }).import(${entry});`;
}

/** A script, for `node -e`, that runs the entry in a process of its own. */
export function entryScript(): string {
  return BUNDLED ? `import(${JSON.stringify(pathToFileURL(ENTRY_FILE).href)});` : entryFromSource();
}
