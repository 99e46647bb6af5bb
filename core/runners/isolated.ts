/**
 * The isolated runner: each plugin in a worker thread or a process of its own (isolate.ts), with a
 * heap cap.
 *
 * A timeout here is real: when the dispatcher aborts a call with a `TimeoutError`, the isolate is
 * killed (a synchronous loop or a runaway regex cannot be stopped any other way), and so are the
 * process groups it started; with other calls in flight, an isolate that still answers a ping is
 * first let finish them (`retire`). An isolate that exits, throws, rejects or runs out of memory ends alone.
 * Either way a fresh one starts after a backoff, ready for the next call; too many failures in a
 * window quarantine the plugin (crash-budget.ts).
 *
 * The re-run rule, for the calls an isolate carries when it dies (docs/isolation.md): the isolate acks
 * each call as its `execute` starts. A call whose `execute` had not started ran nothing, so it runs on
 * the next isolate; one that had started runs again once if its tool is annotated `readOnly` or
 * `idempotent`; any other gets `crashed`, naming the call whose fault it was when another's was. The
 * calls are sorted only once the isolate has exited, when every ack it sent has arrived: sorted at
 * the kill, an ack still in the channel would make a call that started look as if it had not.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { hostError, HostError, messageOf } from '../errors.ts';
import { NO_AUDIT, type AuditSink } from '../audit.ts';
import type { ToolAnnotations } from '../contract.ts';
import type { Logger } from '../log.ts';
import { jsonLongerThan } from '../safe-json.ts';
import type { Progress } from '../types.ts';
import { killProcessGroup } from './child-processes.ts';
import { CrashBudget } from './crash-budget.ts';
import type { Isolate, IsolateFault, StartIsolate } from './isolate.ts';
import { startProcess } from './process.ts';
import {
  CALL_ENDED,
  isTimeout,
  type LoadedPlugin,
  type PluginHealth,
  type PluginRunner,
  type PluginSpec,
  type RunOutcome,
  type RunRequest,
} from './runner.ts';
import { startThread } from './thread.ts';
import type { FromWorker, WorkerData } from './worker-protocol.ts';

/** How long `close()` lets a plugin dispose before killing its isolate. */
const CLOSE_GRACE_MS = 1_000;
/** How long an isolate with a timed-out call has to answer a ping before it is taken for blocked and killed. */
const PING_GRACE_MS = 500;

interface Pending {
  request: RunRequest;
  /** The isolate acked it: its `execute` began, so it may have had side effects. */
  started: boolean;
  /** It may run again after it started (its tool is read-only or idempotent, and it has not yet). */
  rerunnable: boolean;
  settle(outcome: Attempt): void;
}

const LOG_LEVELS: ReadonlySet<string> = new Set(['error', 'warn', 'info', 'debug']);
/** The most meta a log line from an isolate carries, as JSON; more is dropped. */
const MAX_LOG_META_BYTES = 16 * 1024;

/** How one attempt at a call ended: an outcome, or a call to run again on the next isolate. */
type Attempt = RunOutcome | { rerun: 'unstarted' | 'started' };

/**
 * Where a call runs: calls to a tool that has ended an isolate (a timeout, or a crash its code caused)
 * go to a second isolate of their own from then on, so the next fault of that tool takes only its
 * like with it. Most plugins never fault, and never start the second.
 */
type Lane = 'main' | 'suspect';

/** One isolate and what it carries (its load, its calls, its children). A runner has a current sandbox per lane; a stopped one may linger until it exits. */
interface Sandbox {
  isolate: Isolate;
  lane: Lane;
  /** The first sandbox is the plugin's load; failures of later ones (restarts) count against the budget. */
  restart: boolean;
  ready: Promise<LoadedPlugin>;
  loaded: boolean;
  exited: Promise<void>;
  calls: Map<number, Pending>;
  /** Process groups the plugin started and that are still running. */
  children: Set<number>;
  /** Its isolate has exited. */
  gone?: boolean;
  /** Why the sandbox ended or is ending; set once. */
  ended?: string;
  /** What the isolate said of its death (it comes just before its exit). */
  fault?: IsolateFault;
  /** The call whose fault ended the isolate, when that is known: a timeout, or what the isolate said. */
  culprit?: { id: number; tool: string; timedOut: boolean };
  /** Tools whose calls may run twice: annotated `readOnly` or `idempotent` in the isolate's report. */
  rerunnable: Set<string>;
  /**
   * Set when a call timed out while others were in flight: the isolate takes no new call, and ends
   * once the others are answered if it still answers a ping (the timed-out call was waiting, not
   * blocking), or after PING_GRACE_MS if not.
   */
  retiring?: { reason: string; responsive: boolean; timer: NodeJS.Timeout };
  onClosed?: () => void;
  settlers: {
    resolve(report: LoadedPlugin): void;
    reject(error: HostError): void;
    exited(): void;
    loadTimer?: NodeJS.Timeout;
  };
}

/** A runner for `isolation: 'worker'` or `'process'`. */
export function createIsolatedRunner(spec: PluginSpec, log: Logger, audit: AuditSink = NO_AUDIT): PluginRunner {
  return spec.isolation === 'process'
    ? new IsolatedRunner(spec, 'process', startProcess, log, audit)
    : new IsolatedRunner(spec, 'worker', startThread, log, audit);
}

class IsolatedRunner implements PluginRunner {
  readonly isolation: 'worker' | 'process';
  private readonly spec: PluginSpec;
  private readonly log: Logger;
  private readonly audit: AuditSink;
  private readonly budget: CrashBudget;
  private readonly startIsolate: StartIsolate;
  private readonly sandboxes = new Set<Sandbox>();
  private readonly current: Partial<Record<Lane, Sandbox>> = {};
  /** Tools whose calls have ended an isolate: they run in the suspect lane. */
  private readonly suspects = new Set<string>();
  private nextId = 0;
  private closed = false;
  /** The plugin's own name once loaded; the specifier until then. */
  private name: string;

  constructor(
    spec: PluginSpec,
    isolation: 'worker' | 'process',
    startIsolate: StartIsolate,
    log: Logger,
    audit: AuditSink,
  ) {
    this.spec = spec;
    this.isolation = isolation;
    this.startIsolate = startIsolate;
    this.log = log;
    this.audit = audit;
    this.budget = new CrashBudget(spec.quarantine, spec.clock);
    this.name = spec.source;
  }

  async load(): Promise<LoadedPlugin> {
    const report = await this.start(false, 'main').ready;
    if (typeof report.plugin.name === 'string') this.name = report.plugin.name;
    return report;
  }

  async run(request: RunRequest): Promise<RunOutcome> {
    let rerunStarted = false;
    for (;;) {
      const health = this.budget.health();
      if (health.quarantined) return { ok: false, code: 'quarantined', message: health.reason ?? 'quarantined' };
      if (this.closed) return { ok: false, code: 'crashed', message: 'the plugin is closed' };
      if (request.stopped) return abandoned(request.signal);
      const lane: Lane = this.suspects.has(request.tool) ? 'suspect' : 'main';
      let box = this.current[lane];
      if (!box) {
        const wait = this.budget.restartDelay();
        if (wait > 0) {
          if (!(await sleep(wait, request.signal))) return abandoned(request.signal);
          continue; // things may have changed meanwhile: another call started an isolate, or the host closed
        }
        box = this.start(true, lane);
      }
      if (!box.loaded) {
        if (!(await untilSettled(box.ready, request.signal))) return abandoned(request.signal);
        if (!box.loaded) {
          if (this.closed) continue;
          return {
            ok: false,
            code: 'crashed',
            message: `the plugin could not be restarted: ${box.ended ?? 'unknown reason'}`,
          };
        }
      }
      if (box !== this.current[lane]) continue; // it ended or is retiring before this call reached it: the call waits for the next one
      const attempt = await this.post(box, request, !rerunStarted && box.rerunnable.has(request.tool));
      if (!('rerun' in attempt)) return attempt;
      if (attempt.rerun === 'started') rerunStarted = true;
    }
  }

  health(): PluginHealth {
    return this.budget.health();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [...this.sandboxes].map(async (box) => {
        box.isolate.ref(); // an unref'd isolate would let the host's process exit before close() finishes
        if (box.loaded && !box.ended) {
          const acknowledged = new Promise<void>((resolve) => (box.onClosed = resolve));
          box.isolate.send({ type: 'close' });
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            acknowledged,
            new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS))),
          ]);
          clearTimeout(timer);
        }
        this.stop(box, 'the host closed the plugin');
        await box.exited;
      }),
    );
  }

  private start(restart: boolean, lane: Lane): Sandbox {
    const { spec } = this;
    const data: WorkerData = {
      file: spec.file,
      source: spec.source,
      options: spec.options,
      workspace: spec.workspace,
      logLevel: spec.logLevel,
    };
    const settlers = {} as Sandbox['settlers'];
    const box = {
      lane,
      restart,
      loaded: false,
      calls: new Map(),
      children: new Set(),
      rerunnable: new Set(),
      ready: new Promise<LoadedPlugin>((resolve, reject) => Object.assign(settlers, { resolve, reject })),
      exited: new Promise<void>((resolve) => (settlers.exited = resolve)),
      settlers,
    } as Omit<Sandbox, 'isolate'> as Sandbox;
    try {
      box.isolate = this.startIsolate(data, spec, {
        message: (message) => this.onMessage(box, message),
        fault: (fault) => (box.fault ??= fault),
        exit: (code, signal) => this.onExit(box, code, signal),
      });
    } catch (error) {
      // The same options start every restart: only the first start (the load) can get here.
      if ((error as { name?: string }).name !== 'DataCloneError') throw error;
      throw hostError('RH_ERR_PLUGIN_OPTIONS', [
        spec.source,
        `  ${messageOf(error)}: options reach an isolated plugin as plain data (no functions, symbols or class instances)`,
      ]);
    }
    box.ready.catch(() => {}); // a restart nobody waits for any more must not be an unhandled rejection
    settlers.loadTimer = setTimeout(
      () => this.loadFailed(box, hostError('RH_ERR_PLUGIN_LOAD_TIMEOUT', [spec.source, spec.loadTimeoutMs])),
      spec.loadTimeoutMs,
    );
    settlers.loadTimer.unref();
    this.sandboxes.add(box);
    this.current[lane] = box;
    return box;
  }

  private onMessage(box: Sandbox, message: FromWorker): void {
    switch (message.type) {
      case 'loaded':
        clearTimeout(box.settlers.loadTimer);
        box.loaded = true;
        box.rerunnable = rerunnableTools(message.report);
        box.settlers.resolve(message.report);
        break;
      case 'load_error':
        this.loadFailed(box, new HostError(message.code, message.message));
        break;
      case 'started': {
        const pending = box.calls.get(message.id);
        if (pending) pending.started = true;
        break;
      }
      case 'result': {
        const pending = box.calls.get(message.id);
        if (!pending) break; // abandoned: cancelled or timed out
        this.budget.succeeded(); // a tool's own error is an answer too: the plugin works
        pending.settle(
          message.ok
            ? { ok: true, output: message.output }
            : { ok: false, code: 'tool_error', message: message.message },
        );
        break;
      }
      case 'log': {
        // The isolate runs the plugin's code, which can post any message past the relay: only a
        // known level, a string, and meta whose JSON is small (a DAG kept small by structured clone
        // would be written out on the host thread) reach the log.
        const level = LOG_LEVELS.has(message.level) ? message.level : 'info';
        const meta =
          message.meta !== null && typeof message.meta === 'object' && !jsonLongerThan(message.meta, MAX_LOG_META_BYTES)
            ? message.meta
            : {};
        this.log.log(level, String(message.message), meta);
        break;
      }
      case 'progress': {
        // Rebuilt from its typed fields, for the same reason: MCP writes it out as JSON.
        const { done, total, message: text } = (message.progress ?? {}) as Partial<Progress>;
        if (typeof done !== 'number') break;
        const progress: Progress = {
          done,
          ...(typeof total === 'number' ? { total } : {}),
          ...(typeof text === 'string' ? { message: text.slice(0, 1024) } : {}),
        };
        box.calls.get(message.id)?.request.onProgress?.(progress);
        break;
      }
      case 'authorize':
        void this.authorize(box, message);
        break;
      case 'child':
        if (message.exited) box.children.delete(message.pid);
        else if (box.gone)
          killProcessGroup(message.pid); // reported after its isolate ended: nobody else will
        else box.children.add(message.pid);
        break;
      case 'closed':
        box.onClosed?.();
        break;
      case 'fault':
        box.fault ??= { kind: 'error', reason: message.reason };
        break;
      case 'pong':
        if (box.retiring && !box.ended) {
          clearTimeout(box.retiring.timer);
          box.retiring.responsive = true;
          this.retireIfDrained(box);
        }
        break;
      case 'culprit':
        if (!box.ended) box.culprit ??= { id: message.id, tool: message.tool, timedOut: false };
        break;
    }
  }

  /** A load (first or restart) that failed: the sandbox goes, and whoever waits for it learns why. */
  private loadFailed(box: Sandbox, error: HostError): void {
    if (box.ended) return;
    this.stop(box, error.message, error);
    if (box.restart) this.failed('crashed', `restarting failed: ${error.message}`);
  }

  /** The isolate ended by itself, or finished ending after `stop`. */
  private onExit(box: Sandbox, code: number | null, signal: NodeJS.Signals | null): void {
    this.sandboxes.delete(box);
    box.gone = true;
    if (!box.ended) {
      const reason = this.deathOf(box, code, signal);
      if (!box.loaded) {
        this.loadFailed(box, hostError('RH_ERR_PLUGIN_CRASHED', [this.spec.source, reason]));
      } else {
        box.culprit ??= soleStarted(box);
        if (box.culprit) this.suspects.add(box.culprit.tool);
        this.stop(box, reason);
        this.failed('crashed', reason);
      }
    }
    for (const pid of box.children) killProcessGroup(pid); // reported between stop() and the exit
    this.endCalls(box);
    box.settlers.exited();
  }

  /**
   * Ends a sandbox now: a load in progress fails, its process groups are killed (the plugin can no
   * longer do it), and the isolate is killed. The calls it carries are sorted when it has exited.
   */
  private stop(box: Sandbox, reason: string, loadError?: HostError): void {
    if (box.ended) return;
    box.ended = reason;
    if (this.current[box.lane] === box) this.current[box.lane] = undefined;
    clearTimeout(box.settlers.loadTimer);
    clearTimeout(box.retiring?.timer);
    if (!box.loaded) box.settlers.reject(loadError ?? hostError('RH_ERR_PLUGIN_CRASHED', [this.spec.source, reason]));
    for (const pid of box.children) killProcessGroup(pid);
    box.children.clear();
    box.isolate.kill();
  }

  /**
   * A call timed out on `box` while others were in flight. A loop would block them for good, but a
   * promise that never settles blocks nothing: the isolate gets no new calls, the timed-out call's
   * `ctx.signal` fires, and a ping tells which it is. If the isolate answers, it ends once the others
   * are answered (each still bounded by its own timeout); if not, it is killed as before.
   */
  private retire(box: Sandbox, culprit: NonNullable<Sandbox['culprit']>, reason: string, timedOut: string): void {
    if (this.current[box.lane] === box) this.current[box.lane] = undefined;
    const timer = setTimeout(() => {
      box.culprit = culprit;
      this.stop(box, reason);
    }, PING_GRACE_MS);
    timer.unref();
    box.retiring = { reason, responsive: false, timer };
    box.isolate.send({ type: 'abort', id: culprit.id, reason: { name: 'TimeoutError', message: timedOut } });
    box.isolate.send({ type: 'ping' });
  }

  private retireIfDrained(box: Sandbox): void {
    if (box.retiring?.responsive && box.calls.size === 0) this.stop(box, box.retiring.reason);
  }

  /** The calls a dead isolate still carried: each runs again, or gets `crashed` (the rule at the top). */
  private endCalls(box: Sandbox): void {
    for (const [id, pending] of box.calls) {
      if (!this.closed && (!pending.started || pending.rerunnable))
        pending.settle({ rerun: pending.started ? 'started' : 'unstarted' });
      else pending.settle({ ok: false, code: 'crashed', message: this.cutOff(box, id, pending) });
    }
  }

  /** Why call `id` got `crashed` when its isolate ended: the isolate's death, and whose fault it was. */
  private cutOff(box: Sandbox, id: number, pending: Pending): string {
    const { culprit, isolate } = box;
    const reason = box.ended ?? 'unknown reason';
    if (!culprit || culprit.id === id) return reason;
    const what = culprit.timedOut
      ? `the plugin's ${isolate.noun} was stopped because ${reason}`
      : `a call to "${culprit.tool}" ended the plugin's ${isolate.noun} (${reason})`;
    const why = box.rerunnable.has(pending.request.tool)
      ? 'not retried again: it had already been run a second time'
      : 'not retried, since it may already have had side effects (only calls to tools annotated readOnly or idempotent are run again)';
    return `another call's fault: ${what}; this call was cut off with it and ${why}`;
  }

  /** Sends one call to a loaded isolate and settles when it answers, is cancelled, times out or the isolate ends. */
  private post(box: Sandbox, request: RunRequest, rerunnable: boolean): Promise<Attempt> {
    const id = ++this.nextId;
    return new Promise<Attempt>((resolve) => {
      const onAbort = () => {
        if (!box.calls.has(id)) return;
        const { signal } = request; // aborted by now, with the reason
        if (isTimeout(signal)) {
          pending.settle({ ok: false, code: 'timeout', message: messageOf(signal.reason) });
          if (box.ended) return; // another call's fault is already ending it
          const reason = `a call to "${request.tool}" ${messageOf(signal.reason)}`;
          const culprit = { id, tool: request.tool, timedOut: true };
          this.suspects.add(request.tool);
          if (box.retiring || box.calls.size === 0) {
            box.culprit = culprit;
            this.stop(box, reason);
          } else {
            this.retire(box, culprit, reason, messageOf(signal.reason));
          }
          this.failed('timeout', reason);
        } else {
          pending.settle({ ok: false, code: 'tool_error', message: 'cancelled' });
          const reason = signal.reason as { name?: string; message?: string } | undefined;
          box.isolate.send({
            type: 'abort',
            id,
            reason: { name: reason?.name ?? 'AbortError', message: reason?.message ?? 'cancelled' },
          });
        }
      };
      const pending: Pending = {
        request,
        started: false,
        rerunnable,
        settle: (outcome) => {
          box.calls.delete(id);
          resolve(outcome);
          this.retireIfDrained(box);
        },
      };
      box.calls.set(id, pending);
      request.whenStopped(onAbort);
      box.isolate.send({
        type: 'run',
        id,
        tool: request.tool,
        input: request.input,
        callId: request.callId,
        ...(request.sessionId ? { sessionId: request.sessionId } : {}),
      });
    });
  }

  /** Answers a call's `ctx.authorize`; a call the host no longer waits for is allowed nothing. */
  private async authorize(box: Sandbox, { id, seq, input }: Extract<FromWorker, { type: 'authorize' }>): Promise<void> {
    const request = box.calls.get(id)?.request;
    const result = request ? await request.authorize(input) : CALL_ENDED;
    if (!box.ended) box.isolate.send({ type: 'authorized', id, seq, result });
  }

  /** Counts a crash or timeout against the budget; logs and audits it, and the quarantine it may start. */
  private failed(kind: 'crashed' | 'timeout', reason: string): void {
    const quarantine = this.budget.record(reason);
    this.log.warn(
      `plugin ${this.name} ${kind === 'timeout' ? 'timed out' : 'crashed'}: ${reason}; its ${this.isolation} restarts for the next call`,
    );
    this.audit.write({ event: 'plugin', plugin: this.name, state: kind, reason });
    if (quarantine) {
      this.log.error(`plugin ${this.name} quarantined: ${quarantine.reason}`);
      this.audit.write({
        event: 'plugin',
        plugin: this.name,
        state: 'quarantined',
        reason: quarantine.reason,
        until: new Date(quarantine.until).toISOString(),
      });
      return;
    }
    // Start the next isolate now (after the backoff), not when the next call comes: a start costs tens
    // of ms, more on a busy machine, and would otherwise eat into that call's timeout.
    setTimeout(() => {
      if (this.current.main || this.closed || this.budget.health().quarantined) return;
      try {
        this.start(true, 'main');
      } catch (error) {
        // The OS refused a thread or process (no memory, no file descriptors): the next call tries again.
        this.failed('crashed', `restarting failed: ${messageOf(error)}`);
      }
    }, this.budget.restartDelay()).unref();
  }

  /** Why an isolate that ended by itself ended, in the words a call's `crashed` result carries. */
  private deathOf(box: Sandbox, code: number | null, signal: NodeJS.Signals | null): string {
    const { fault } = box;
    if (fault?.kind === 'memory')
      return `ran out of memory: its heap reached the limit of ${this.spec.memoryMb} MiB (memoryMb in the plugin's config)`;
    if (fault) return fault.reason;
    const noun = box.isolate.noun;
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    if (box.loaded) return `the ${noun} ${how}`;
    return `the ${noun} ${how} before the plugin finished loading (a top-level await or setup() waiting on something that never happens?)`;
  }
}

/** When an isolate dies of an unnamed fault (out of memory) with one call started on it, that call's. */
function soleStarted(box: Sandbox): Sandbox['culprit'] {
  const started = [...box.calls].filter(([, pending]) => pending.started);
  if (started.length !== 1) return undefined;
  const [id, pending] = started[0]!;
  return { id, tool: pending.request.tool, timedOut: false };
}

/** The tools of a report that say running a call twice is harmless (the contract check has vetted the flags). */
function rerunnableTools(report: LoadedPlugin): Set<string> {
  const names = new Set<string>();
  for (const tool of report.tools ?? []) {
    const annotations = tool.annotations as ToolAnnotations | undefined;
    if (typeof tool.name === 'string' && (annotations?.readOnly === true || annotations?.idempotent === true))
      names.add(tool.name);
  }
  return names;
}

/** The outcome of a call the dispatcher has already answered (timeout or cancellation): it is dropped. */
function abandoned(signal: AbortSignal): RunOutcome {
  return isTimeout(signal)
    ? { ok: false, code: 'timeout', message: messageOf(signal.reason) }
    : { ok: false, code: 'tool_error', message: 'cancelled' };
}
/** Waits for `promise` to settle (either way); false when `signal` aborts first. */
function untilSettled(promise: Promise<unknown>, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
    promise
      .then(
        () => resolve(true),
        () => resolve(true),
      )
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Waits `ms` (false when the signal aborts first); the timer never outlives the wait or holds the process open. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return delay(ms, true, { signal, ref: false }).catch(() => false);
}
