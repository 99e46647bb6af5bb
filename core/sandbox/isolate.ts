/**
 * Where an isolated plugin runs, as its runner sees it: a worker thread (thread.ts) or a child
 * process of its own (process.ts). Both run the same entry (worker-entry.ts) and speak the same
 * messages (worker-protocol.ts); they differ in what they can contain and in how they die.
 */
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
}

export type StartIsolate = (data: WorkerData, spec: PluginSpec, events: IsolateEvents) => Isolate;
