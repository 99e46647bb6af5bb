/**
 * The messages between the host and a plugin's worker thread or process. Everything is plain data (structured clone):
 * functions never cross, and a tool's result is checked before it is sent (wire.ts).
 */
import type { Authorization, ElicitResult, SampleResult } from '../contract.ts';
import type { HostErrorCode } from '../errors.ts';
import type { LogLevel } from '../log.ts';
import type { Progress } from '../types.ts';
import type { LoadedPlugin } from './runner.ts';

/** What the entry needs to import and instantiate its plugin (`workerData`; a process's first message). */
export interface WorkerData {
  file: string;
  source: string;
  options: unknown;
  workspace: string;
  /** Log lines below this level are not relayed: they would only be dropped by the host. */
  logLevel: string;
  /** The most text a message may carry (wire.ts `tooLargeToSend`): the plugin's heap limit, in characters. */
  maxSentChars: number;
  /** A thread's: where it writes the id of each call as its `execute` begins (a process sends `started`). */
  lastStarted?: Int32Array;
}

export type ToWorker =
  /** A process's first message (a thread gets it as `workerData`). */
  | { type: 'init'; data: WorkerData }
  | {
      type: 'run';
      id: number;
      tool: string;
      input: unknown;
      callId: string;
      sessionId?: string;
      /** Relay every level of the call's log lines, not only those the host logs: its caller takes them all. */
      logAll?: true;
    }
  /** A plain cancellation: fires `ctx.signal` in the worker. A timeout ends the worker instead. */
  | { type: 'abort'; id: number; reason: { name: string; message: string } }
  /** The host's answer to an `authorize` the call `id` sent. */
  | { type: 'authorized'; id: number; seq: number; result: Authorization }
  /** The host's answer to a `question` the call `id` sent: the answer, or why there is none (the tool's promise rejects with it). */
  | { type: 'answer'; id: number; seq: number; ok: true; result: ElicitResult | SampleResult }
  | { type: 'answer'; id: number; seq: number; ok: false; message: string }
  /** Whether the isolate's event loop still turns (a call timed out: was it a loop, or a promise that never settles?). */
  | { type: 'ping' }
  /** The host is closing: dispose, end child processes, answer `closed`. */
  | { type: 'close' };

export type FromWorker =
  | { type: 'loaded'; report: LoadedPlugin }
  | { type: 'load_error'; code: HostErrorCode; message: string }
  /** A process's: the call's `execute` is about to run, so it may have had side effects from here on (isolated.ts re-runs only calls that had not). */
  | { type: 'started'; id: number }
  | { type: 'result'; id: number; ok: true; output: unknown }
  | { type: 'result'; id: number; ok: false; message: string }
  /** A `ctx.log` line of call `call.id`, or (no `call`) of the plugin's own logger. */
  | {
      type: 'log';
      level: LogLevel;
      message: string;
      meta?: Record<string, unknown>;
      call?: { id: number; tool: string; callId: string };
    }
  | { type: 'progress'; id: number; progress: Progress }
  /** `ctx.authorize(input)` in call `id`; `seq` pairs it with its answer. */
  | { type: 'authorize'; id: number; seq: number; input: unknown }
  /** `ctx.elicit(request)` or `ctx.sample(request)` in call `id`; `seq` pairs it with its `answer`. */
  | { type: 'question'; id: number; seq: number; kind: 'elicit' | 'sample'; request: unknown }
  /** A child process the plugin started (or that ended): the host kills what is left when the worker ends. */
  | { type: 'child'; pid: number; exited: boolean }
  | { type: 'closed' }
  | { type: 'pong' }
  /** A process about to die of an uncaught exception or rejection says which (a thread's 'error' event does). */
  | { type: 'fault'; reason: string }
  /** The isolate is dying of code that a call started (its async context says which): the host names it to the calls cut off with it. */
  | { type: 'culprit'; id: number; tool: string };

/** The `name` the worker gives the error it throws for an unhandled rejection, so the host can say which it was. */
export const UNHANDLED_REJECTION = 'UnhandledRejection';
