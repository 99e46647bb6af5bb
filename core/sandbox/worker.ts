/**
 * The worker runner: each plugin in its own worker thread (worker-entry.ts), with a heap cap.
 *
 * A timeout here is real: when the dispatcher aborts a call with a `TimeoutError`, the worker is
 * terminated (a synchronous loop or a runaway regex cannot be stopped any other way), and so are the
 * process groups it started. A worker that exits, throws, rejects or runs out of memory ends alone.
 * Either way a fresh worker starts after a backoff, ready for the next call; too many failures in a
 * window quarantine the plugin (crash-budget.ts).
 *
 * The retry rule: a call that had reached a worker that is then stopped or crashes gets `crashed`
 * and is never retried, since it may already have had side effects. A call still waiting for the
 * worker to start (it never ran) simply waits for the next one.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { createRequire } from 'node:module';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { hostError, HostError, messageOf } from '../errors.ts';
import { NO_AUDIT, type AuditSink } from '../audit.ts';
import type { Logger } from '../log.ts';
import { FROM_SOURCE, hostFile } from '../paths.ts';
import { killProcessGroup } from './child-processes.ts';
import { CrashBudget } from './crash-budget.ts';
import { isTimeout, type LoadedPlugin, type PluginHealth, type PluginRunner, type PluginSpec, type RunOutcome, type RunRequest } from './runner.ts';
import { UNHANDLED_REJECTION, type FromWorker, type ToWorker, type WorkerData } from './worker-protocol.ts';

/** How long `close()` lets a worker dispose before terminating it. */
const CLOSE_GRACE_MS = 1_000;

interface Pending {
  request: RunRequest;
  settle(outcome: RunOutcome): void;
}

/** One worker and what it carries. A runner has one current thread; a stopped one may linger until it exits. */
interface Thread {
  worker: Worker;
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
  /** What the worker's 'error' event said (it comes just before 'exit'). */
  fatal?: string;
  onClosed?: () => void;
  settlers: { resolve(report: LoadedPlugin): void; reject(error: HostError): void; exited(): void; loadTimer?: NodeJS.Timeout };
}

export function createWorkerRunner(spec: PluginSpec, log: Logger, audit: AuditSink = NO_AUDIT): PluginRunner {
  return new WorkerRunner(spec, log, audit);
}

class WorkerRunner implements PluginRunner {
  readonly isolation = 'worker' as const;
  private readonly spec: PluginSpec;
  private readonly log: Logger;
  private readonly audit: AuditSink;
  private readonly budget: CrashBudget;
  private readonly threads = new Set<Thread>();
  private current: Thread | undefined;
  private nextId = 0;
  private closed = false;
  /** The plugin's own name once loaded; the specifier until then. */
  private name: string;

  constructor(spec: PluginSpec, log: Logger, audit: AuditSink) {
    this.spec = spec;
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
        thread.worker.ref(); // an unref'd worker would let the process exit before close() finishes
        if (thread.loaded && !thread.ended) {
          const acknowledged = new Promise<void>((resolve) => (thread.onClosed = resolve));
          thread.worker.postMessage({ type: 'close' } satisfies ToWorker);
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
    const workerData: WorkerData = { file: spec.file, source: spec.source, options: spec.options, workspace: spec.workspace, logLevel: spec.logLevel };
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
    // The host's own timers (a call's timeout, the load timeout) keep the process alive while it waits
    // for a worker; an idle worker must not keep a one-shot command from exiting.
    worker.unref();

    const settlers = {} as Thread['settlers'];
    const thread: Thread = {
      worker,
      restart,
      loaded: false,
      calls: new Map(),
      children: new Set(),
      ready: new Promise<LoadedPlugin>((resolve, reject) => Object.assign(settlers, { resolve, reject })),
      exited: new Promise<void>((resolve) => (settlers.exited = resolve)),
      settlers,
    };
    thread.ready.catch(() => {}); // a restart nobody waits for any more must not be an unhandled rejection
    settlers.loadTimer = setTimeout(() => this.loadFailed(thread, hostError('RH_ERR_PLUGIN_LOAD_TIMEOUT', [spec.source, spec.loadTimeoutMs])), spec.loadTimeoutMs);
    settlers.loadTimer.unref();
    this.threads.add(thread);
    this.current = thread;

    worker.on('message', (message: FromWorker) => this.onMessage(thread, message));
    worker.on('error', (error: unknown) => (thread.fatal ??= this.describeFatal(error)));
    worker.on('exit', (code: number) => this.onExit(thread, code));
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
    }
  }

  /** A load (first or restart) that failed: the thread goes, and whoever waits for it learns why. */
  private loadFailed(thread: Thread, error: HostError): void {
    if (thread.ended) return;
    this.stop(thread, error.message, error);
    if (thread.restart) this.failed('crashed', `restarting failed: ${error.message}`);
  }

  /** The worker ended by itself, or finished ending after `stop`. */
  private onExit(thread: Thread, code: number): void {
    this.threads.delete(thread);
    if (!thread.ended) {
      const reason = thread.fatal ?? exitReason(code, thread.loaded);
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
    void thread.worker.terminate();
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
          this.stop(thread, `the plugin's worker was stopped because ${reason}; this call was cut off with it and not retried, since it may already have had side effects`);
          this.failed('timeout', reason);
        } else {
          pending.settle({ ok: false, code: 'tool_error', message: 'cancelled' });
          const reason = signal.reason as { name?: string; message?: string } | undefined;
          thread.worker.postMessage({ type: 'abort', id, reason: { name: reason?.name ?? 'AbortError', message: reason?.message ?? 'cancelled' } } satisfies ToWorker);
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
      thread.worker.postMessage({
        type: 'run',
        id,
        tool: request.tool,
        input: request.input,
        callId: request.callId,
        ...(request.sessionId ? { sessionId: request.sessionId } : {}),
      } satisfies ToWorker);
    });
  }

  /** Counts a crash or timeout against the budget; logs and audits it, and the quarantine it may start. */
  private failed(kind: 'crashed' | 'timeout', reason: string): void {
    const quarantine = this.budget.record(reason);
    this.log.warn(`plugin ${this.name} ${kind === 'timeout' ? 'timed out' : 'crashed'}: ${reason}; its worker restarts for the next call`);
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

  private describeFatal(error: unknown): string {
    const e = error as { code?: string; name?: string } | undefined;
    if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return `ran out of memory: its heap reached the limit of ${this.spec.memoryMb} MiB (memoryMb in the plugin's config)`;
    }
    if (e?.name === UNHANDLED_REJECTION) return messageOf(error);
    return `uncaught exception: ${messageOf(error)}`;
  }
}

/** The worker's entry: its source under tsx (tests), dist/worker.js otherwise. */
const WORKER_FILE = hostFile('core/sandbox/worker-entry.ts', 'worker.js');

/**
 * From source, the entry is TypeScript, and a worker inherits neither tsx's hooks nor (on Node 20) a
 * `--import tsx` given in `execArgv`. It loads its entry with jiti, which it needs for the plugin
 * anyway: registering tsx there instead made a worker's start 2-4× slower (its hooks tax every
 * module loaded after them, and typebox alone is 373).
 */
function newWorker(options: WorkerOptions): Worker {
  if (!FROM_SOURCE) return new Worker(WORKER_FILE, options);
  const jiti = JSON.stringify(createRequire(import.meta.url).resolve('jiti'));
  const entry = JSON.stringify(WORKER_FILE);
  return new Worker(`require(${jiti}).createJiti(${entry}, { fsCache: true }).import(${entry});`, { ...options, eval: true });
}

function exitReason(code: number, loaded: boolean): string {
  if (loaded) return `the worker exited with code ${code}`;
  return `the worker exited with code ${code} before the plugin finished loading (a top-level await or setup() waiting on something that never happens?)`;
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
