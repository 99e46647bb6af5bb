/**
 * The isolated runner: each plugin in a worker thread or a process of its own (isolate.ts), with a
 * heap cap.
 *
 * A timeout here is real: when the dispatcher aborts a call with a `TimeoutError`, the isolate is
 * killed (a synchronous loop or a runaway regex cannot be stopped any other way), and so are the
 * process groups it started. An isolate that exits, throws, rejects or runs out of memory ends alone.
 * Either way a fresh one starts after a backoff, ready for the next call; too many failures in a
 * window quarantine the plugin (crash-budget.ts).
 *
 * The retry rule: a call that had reached an isolate that is then stopped or crashes gets `crashed`
 * and is never retried, since it may already have had side effects. A call still waiting for the
 * isolate to start (it never ran) simply waits for the next one.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { hostError, HostError, messageOf } from '../errors.ts';
import { NO_AUDIT, type AuditSink } from '../audit.ts';
import type { Logger } from '../log.ts';
import { killProcessGroup } from './child-processes.ts';
import { CrashBudget } from './crash-budget.ts';
import type { Isolate, IsolateFault, StartIsolate } from './isolate.ts';
import { startProcess } from './process.ts';
import { isTimeout, type LoadedPlugin, type PluginHealth, type PluginRunner, type PluginSpec, type RunOutcome, type RunRequest } from './runner.ts';
import { startThread } from './thread.ts';
import type { FromWorker, WorkerData } from './worker-protocol.ts';

/** How long `close()` lets a plugin dispose before killing its isolate. */
const CLOSE_GRACE_MS = 1_000;

interface Pending {
  request: RunRequest;
  settle(outcome: RunOutcome): void;
}

/** One isolate and what it carries. A runner has one current thread; a stopped one may linger until it exits. */
interface Thread {
  isolate: Isolate;
  /** The first thread is the plugin's load; failures of later ones (restarts) count against the budget. */
  restart: boolean;
  ready: Promise<LoadedPlugin>;
  loaded: boolean;
  exited: Promise<void>;
  calls: Map<number, Pending>;
  /** Process groups the plugin started and that are still running. */
  children: Set<number>;
  /** Why the thread ended or is ending; set once. */
  ended?: string;
  /** What the isolate said of its death (it comes just before its exit). */
  fault?: IsolateFault;
  onClosed?: () => void;
  settlers: { resolve(report: LoadedPlugin): void; reject(error: HostError): void; exited(): void; loadTimer?: NodeJS.Timeout };
}

/** A runner for `isolation: 'worker'` or `'process'`. */
export function createIsolatedRunner(spec: PluginSpec & { isolation: 'worker' | 'process' }, log: Logger, audit: AuditSink = NO_AUDIT): PluginRunner {
  return new IsolatedRunner(spec, spec.isolation === 'process' ? startProcess : startThread, log, audit);
}

class IsolatedRunner implements PluginRunner {
  readonly isolation: 'worker' | 'process';
  private readonly spec: PluginSpec;
  private readonly log: Logger;
  private readonly audit: AuditSink;
  private readonly budget: CrashBudget;
  private readonly startIsolate: StartIsolate;
  private readonly threads = new Set<Thread>();
  private current: Thread | undefined;
  private nextId = 0;
  private closed = false;
  /** The plugin's own name once loaded; the specifier until then. */
  private name: string;

  constructor(spec: PluginSpec & { isolation: 'worker' | 'process' }, startIsolate: StartIsolate, log: Logger, audit: AuditSink) {
    this.spec = spec;
    this.isolation = spec.isolation;
    this.startIsolate = startIsolate;
    this.log = log;
    this.audit = audit;
    this.budget = new CrashBudget(spec.quarantine);
    this.name = spec.source;
  }

  async load(): Promise<LoadedPlugin> {
    const report = await this.start(false).ready;
    if (typeof report.plugin.name === 'string') this.name = report.plugin.name;
    return report;
  }

  async run(request: RunRequest): Promise<RunOutcome> {
    for (;;) {
      const health = this.budget.health();
      if (health.quarantined) return { ok: false, code: 'quarantined', message: health.reason ?? 'quarantined' };
      if (this.closed) return { ok: false, code: 'crashed', message: 'the plugin is closed' };
      if (request.stopped) return abandoned(request.signal);
      let thread = this.current;
      if (!thread) {
        const wait = this.budget.restartDelay();
        if (wait > 0) {
          if (!(await sleep(wait, request.signal))) return abandoned(request.signal);
          continue; // things may have changed meanwhile: another call started a worker, or the host closed
        }
        thread = this.start(true);
      }
      if (!thread.loaded) {
        if (!(await untilSettled(thread.ready, request.signal))) return abandoned(request.signal);
        if (!thread.loaded) {
          if (this.closed) continue;
          return { ok: false, code: 'crashed', message: `the plugin could not be restarted: ${thread.ended ?? 'unknown reason'}` };
        }
      }
      if (thread.ended) continue; // it ended before this call reached it: the call never ran, so it waits for the next one
      return this.post(thread, request);
    }
  }

  health(): PluginHealth {
    return this.budget.health();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [...this.threads].map(async (thread) => {
        thread.isolate.ref(); // an unref'd isolate would let the host's process exit before close() finishes
        if (thread.loaded && !thread.ended) {
          const acknowledged = new Promise<void>((resolve) => (thread.onClosed = resolve));
          thread.isolate.send({ type: 'close' });
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([acknowledged, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)))]);
          clearTimeout(timer);
        }
        this.stop(thread, 'the host closed the plugin');
        await thread.exited;
      }),
    );
  }

  private start(restart: boolean): Thread {
    const { spec } = this;
    const data: WorkerData = { file: spec.file, source: spec.source, options: spec.options, workspace: spec.workspace, logLevel: spec.logLevel };
    const settlers = {} as Thread['settlers'];
    const thread = {
      restart,
      loaded: false,
      calls: new Map(),
      children: new Set(),
      ready: new Promise<LoadedPlugin>((resolve, reject) => Object.assign(settlers, { resolve, reject })),
      exited: new Promise<void>((resolve) => (settlers.exited = resolve)),
      settlers,
    } as Omit<Thread, 'isolate'> as Thread;
    thread.isolate = this.startIsolate(data, spec, {
      message: (message) => this.onMessage(thread, message),
      fault: (fault) => (thread.fault ??= fault),
      exit: (code, signal) => this.onExit(thread, code, signal),
    });
    thread.ready.catch(() => {}); // a restart nobody waits for any more must not be an unhandled rejection
    settlers.loadTimer = setTimeout(() => this.loadFailed(thread, hostError('RH_ERR_PLUGIN_LOAD_TIMEOUT', [spec.source, spec.loadTimeoutMs])), spec.loadTimeoutMs);
    settlers.loadTimer.unref();
    this.threads.add(thread);
    this.current = thread;
    return thread;
  }

  private onMessage(thread: Thread, message: FromWorker): void {
    switch (message.type) {
      case 'loaded':
        clearTimeout(thread.settlers.loadTimer);
        thread.loaded = true;
        thread.settlers.resolve(message.report);
        break;
      case 'load_error':
        this.loadFailed(thread, new HostError(message.code, message.message));
        break;
      case 'result': {
        const pending = thread.calls.get(message.id);
        if (!pending) break; // abandoned: cancelled, or the worker was stopped
        this.budget.succeeded(); // a tool's own error is an answer too: the worker is healthy
        pending.settle(message.ok ? { ok: true, output: message.output } : { ok: false, code: 'tool_error', message: message.message });
        break;
      }
      case 'log':
        this.log.log(message.level, message.message, message.meta ?? {});
        break;
      case 'progress':
        thread.calls.get(message.id)?.request.onProgress?.(message.progress);
        break;
      case 'child':
        if (message.exited) thread.children.delete(message.pid);
        else thread.children.add(message.pid);
        break;
      case 'closed':
        thread.onClosed?.();
        break;
      case 'fault':
        thread.fault ??= { kind: 'error', reason: message.reason };
        break;
    }
  }

  /** A load (first or restart) that failed: the thread goes, and whoever waits for it learns why. */
  private loadFailed(thread: Thread, error: HostError): void {
    if (thread.ended) return;
    this.stop(thread, error.message, error);
    if (thread.restart) this.failed('crashed', `restarting failed: ${error.message}`);
  }

  /** The isolate ended by itself, or finished ending after `stop`. */
  private onExit(thread: Thread, code: number | null, signal: NodeJS.Signals | null): void {
    this.threads.delete(thread);
    if (!thread.ended) {
      const reason = this.deathOf(thread, code, signal);
      if (!thread.loaded) {
        this.loadFailed(thread, hostError('RH_ERR_PLUGIN_CRASHED', [this.spec.source, reason]));
      } else {
        this.stop(thread, reason);
        this.failed('crashed', reason);
      }
    }
    for (const pid of thread.children) killProcessGroup(pid); // reported between stop() and the exit
    thread.settlers.exited();
  }

  /**
   * Ends a thread now: a load in progress fails, the calls it carries get `crashed` with `reason`, its
   * process groups are killed (the worker can no longer do it), and the worker is terminated.
   */
  private stop(thread: Thread, reason: string, loadError?: HostError): void {
    if (thread.ended) return;
    thread.ended = reason;
    if (this.current === thread) this.current = undefined;
    clearTimeout(thread.settlers.loadTimer);
    if (!thread.loaded) thread.settlers.reject(loadError ?? hostError('RH_ERR_PLUGIN_CRASHED', [this.spec.source, reason]));
    for (const pending of thread.calls.values()) pending.settle({ ok: false, code: 'crashed', message: reason });
    for (const pid of thread.children) killProcessGroup(pid);
    thread.children.clear();
    thread.isolate.kill();
  }

  /** Sends one call to a loaded worker and settles when it answers, is cancelled, times out or the worker ends. */
  private post(thread: Thread, request: RunRequest): Promise<RunOutcome> {
    const id = ++this.nextId;
    return new Promise<RunOutcome>((resolve) => {
      const onAbort = () => {
        if (!thread.calls.has(id)) return;
        const { signal } = request; // aborted by now, with the reason
        if (isTimeout(signal)) {
          const reason = `a call to "${request.tool}" ${messageOf(signal.reason)}`;
          pending.settle({ ok: false, code: 'timeout', message: messageOf(signal.reason) });
          this.stop(thread, `the plugin's ${thread.isolate.noun} was stopped because ${reason}; this call was cut off with it and not retried, since it may already have had side effects`);
          this.failed('timeout', reason);
        } else {
          pending.settle({ ok: false, code: 'tool_error', message: 'cancelled' });
          const reason = signal.reason as { name?: string; message?: string } | undefined;
          thread.isolate.send({ type: 'abort', id, reason: { name: reason?.name ?? 'AbortError', message: reason?.message ?? 'cancelled' } });
        }
      };
      const pending: Pending = {
        request,
        settle(outcome) {
          thread.calls.delete(id);
          resolve(outcome);
        },
      };
      thread.calls.set(id, pending);
      request.whenStopped(onAbort);
      thread.isolate.send({
        type: 'run',
        id,
        tool: request.tool,
        input: request.input,
        callId: request.callId,
        ...(request.sessionId ? { sessionId: request.sessionId } : {}),
      });
    });
  }

  /** Counts a crash or timeout against the budget; logs and audits it, and the quarantine it may start. */
  private failed(kind: 'crashed' | 'timeout', reason: string): void {
    const quarantine = this.budget.record(reason);
    this.log.warn(`plugin ${this.name} ${kind === 'timeout' ? 'timed out' : 'crashed'}: ${reason}; its ${this.isolation} restarts for the next call`);
    this.audit.write({ event: 'plugin', plugin: this.name, state: kind, reason });
    if (quarantine) {
      this.log.error(`plugin ${this.name} quarantined: ${quarantine.reason}`);
      this.audit.write({ event: 'plugin', plugin: this.name, state: 'quarantined', reason: quarantine.reason, until: new Date(quarantine.until).toISOString() });
      return;
    }
    // Start the next worker now (after the backoff), not when the next call comes: a start costs tens
    // of ms, more on a busy machine, and would otherwise eat into that call's timeout.
    setTimeout(() => {
      if (!this.current && !this.closed && !this.budget.health().quarantined) this.start(true);
    }, this.budget.restartDelay()).unref();
  }

  /** Why an isolate that ended by itself ended, in the words a call's `crashed` result carries. */
  private deathOf(thread: Thread, code: number | null, signal: NodeJS.Signals | null): string {
    const { fault } = thread;
    if (fault?.kind === 'memory') return `ran out of memory: its heap reached the limit of ${this.spec.memoryMb} MiB (memoryMb in the plugin's config)`;
    if (fault) return fault.reason;
    const noun = thread.isolate.noun;
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    if (thread.loaded) return `the ${noun} ${how}`;
    return `the ${noun} ${how} before the plugin finished loading (a top-level await or setup() waiting on something that never happens?)`;
  }
}

/** The outcome of a call the dispatcher has already answered (timeout or cancellation): it is dropped. */
function abandoned(signal: AbortSignal): RunOutcome {
  return isTimeout(signal) ? { ok: false, code: 'timeout', message: messageOf(signal.reason) } : { ok: false, code: 'tool_error', message: 'cancelled' };
}
/** Waits for `promise` to settle (either way); false when `signal` aborts first. */
function untilSettled(promise: Promise<unknown>, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      () => resolve(true),
      () => resolve(true),
    ).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Waits `ms` (false when the signal aborts first); the timer never outlives the wait or holds the process open. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return delay(ms, true, { signal, ref: false }).catch(() => false);
}
