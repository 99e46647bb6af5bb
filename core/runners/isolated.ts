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
 * The re-run rule, for the calls an isolate carries when it dies (docs/isolation.md): the isolate records
 * each call as its `execute` starts (isolate.ts, `lastStarted`). A call whose `execute` had not started ran nothing, so it runs on
 * the next isolate; one that had started runs again once if its tool is annotated `readOnly` or
 * `idempotent`; any other gets `crashed`, naming the call whose fault it was when another's was. The
 * calls are sorted only once the isolate has exited, when every ack it sent has arrived: sorted at
 * the kill, an ack still in the channel would make a call that started look as if it had not.
 */
import { abortable } from '../abortable.ts';
import { hostError, HostError, loadTimeoutError, messageOf } from '../errors.ts';
import { CallTable } from '../call-table.ts';
import { NO_AUDIT, type AuditSink } from '../audit.ts';
import type { ToolAnnotations } from '../contract.ts';
import { isLogLevel, type Logger } from '../log.ts';
import { jsonLongerThan } from '../safe-json.ts';
import type { Progress } from '../types.ts';
import { killProcessGroup } from './child-processes.ts';
import { CrashBudget, reportFailure } from './crash-budget.ts';
import { MAX_RELAYED_PER_SECOND, RelayBudget } from './relay-budget.ts';
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
import { emitLog, progressOf } from './tool-context.ts';
import type { FromWorker, ToWorker, WorkerData } from './worker-protocol.ts';

/** How long `close()` lets a plugin dispose before killing its isolate. */
const CLOSE_GRACE_MS = 1_000;
/** How long an isolate with a timed-out call has to answer a ping before it is taken for blocked and killed. */
const PING_GRACE_MS = 500;

interface Pending {
  request: RunRequest;
  /** It may run again after it started (its tool is read-only or idempotent, and it has not yet). */
  rerunnable: boolean;
  settle(outcome: Attempt): void;
  /** Armed when the call is cancelled: how long the isolate has to say the tool stopped. */
  overrun?: NodeJS.Timeout;
  /**
   * The tool outlived its time (a timeout, or a cancellation ignored for a whole timeout) and its
   * isolate is retiring or ending. The call was answered already; it stays here, holding its slot,
   * until the tool returns or the isolate ends, but keeps no retiring isolate alive.
   */
  overran?: boolean;
}

/** The most meta a log line from an isolate carries, as JSON; more is dropped. */
const MAX_LOG_META_BYTES = 16 * 1024;

/** The most characters of a log line's text from an isolate; the rest is cut, saying how much. */
const MAX_LOG_TEXT_CHARS = 16 * 1024;

/** How one attempt at a call ended: an outcome, or a call to run again on the next isolate. */
type Attempt = RunOutcome | { rerun: 'unstarted' | 'started' };

/**
 * Where a call runs: calls to a tool that has ended an isolate (a timeout, or a crash its code caused)
 * go to a second isolate of their own from then on, so the next fault of that tool takes only its
 * like with it. Most plugins never fault, and never start the second.
 */
type Lane = 'main' | 'suspect';

/**
 * Where a sandbox is in its life. Each state holds what only it needs (its timer, why it ends), and
 * `enter` allows only these moves (TRANSITIONS): loading → ready → retiring → ending → gone, where
 * loading and ready may also go straight to ending. `ending` comes before `gone` on every path: an
 * isolate that exits by itself is first stopped.
 */
type SandboxState =
  /** Importing and instantiating the plugin; `restart` when it is not the plugin's first load (its failure counts against the budget). */
  | { name: 'loading'; restart: boolean; loadTimer: NodeJS.Timeout }
  /** Loaded: takes calls. */
  | { name: 'ready' }
  /**
   * A call timed out while others were in flight: the isolate takes no new call, and ends once the
   * others are answered if it answers a ping (`responsive`: the timed-out call was waiting, not
   * blocking), or when `timer` (PING_GRACE_MS) fires if not.
   */
  | { name: 'retiring'; reason: string; responsive: boolean; timer: NodeJS.Timeout }
  /** Stopped, for `reason`: its isolate is being killed. */
  | { name: 'ending'; reason: string }
  /** Its isolate has exited. */
  | { name: 'gone'; reason: string };

type StateName = SandboxState['name'];

const TRANSITIONS: Record<StateName, readonly StateName[]> = {
  loading: ['ready', 'ending'],
  ready: ['retiring', 'ending'],
  retiring: ['ending'],
  ending: ['gone'],
  gone: [],
};

/** Moves a sandbox to its next state, clearing the timer of the one it leaves. */
function enter(box: Sandbox, next: SandboxState): void {
  const from = box.state;
  if (!TRANSITIONS[from.name].includes(next.name)) {
    throw new Error(`internal error: a sandbox cannot go from ${from.name} to ${next.name}`);
  }
  if (from.name === 'loading') clearTimeout(from.loadTimer);
  if (from.name === 'retiring') clearTimeout(from.timer);
  box.state = next;
}

/** Stopped or gone: it takes nothing more, and tells nothing more. */
function isEnding(box: Sandbox): box is Sandbox & { state: { name: 'ending' | 'gone'; reason: string } } {
  return box.state.name === 'ending' || box.state.name === 'gone';
}

/** Why a sandbox ended or is ending. */
function endReason(box: Sandbox): string {
  const { state } = box;
  return state.name === 'ending' || state.name === 'gone' ? state.reason : 'unknown reason';
}

/** One isolate and what it carries (its load, its calls, its children). A runner has a current sandbox per lane; a stopped one may linger until it exits. */
interface Sandbox {
  state: SandboxState;
  isolate: Isolate;
  lane: Lane;
  ready: Promise<LoadedPlugin>;
  exited: Promise<void>;
  calls: CallTable<Pending>;
  /** Process groups the plugin started and that are still running. */
  children: Set<number>;
  /**
   * Its log lines and progress reports: twice the entry's rate, as the entry's windows and the host's
   * do not line up (relay-budget.ts). Only a plugin posting past the entry meets it.
   */
  relayed: RelayBudget;
  /** What the isolate said of its death (it comes just before its exit). */
  fault?: IsolateFault;
  /** The call whose fault ended the isolate, when that is known: a timeout, or what the isolate said. */
  culprit?: { id: number; tool: string; timedOut: boolean };
  /** Tools whose calls may run twice: annotated `readOnly` or `idempotent` in the isolate's report. */
  rerunnable: Set<string>;
  onClosed?: () => void;
  settlers: {
    resolve(report: LoadedPlugin): void;
    reject(error: HostError): void;
    exited(): void;
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
      if (this.closed) return { ok: false, code: 'crashed', message: 'the plugin is closed', retry: false };
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
      if (box.state.name === 'loading') {
        const loaded = await abortable(box.ready, { signal: request.signal }).then(
          () => true,
          () => false,
        );
        if (request.stopped) return abandoned(request.signal);
        if (!loaded) {
          if (this.closed) continue;
          return {
            ok: false,
            code: 'crashed',
            message: `the plugin could not be restarted: ${endReason(box)}`,
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
        if (box.state.name === 'ready' || box.state.name === 'retiring') {
          const acknowledged = new Promise<void>((resolve) => {
            box.onClosed = resolve;
          });
          box.isolate.send({ type: 'close' });
          await abortable(acknowledged, { timeoutMs: CLOSE_GRACE_MS }).catch(() => {}); // then it is killed
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
      maxSentChars: spec.memoryMb * 1024 * 1024,
    };
    const settlers = {} as Sandbox['settlers'];
    const loadTimer = setTimeout(
      () => this.loadFailed(box, loadTimeoutError(spec.source, spec.loadTimeoutMs, false)),
      spec.loadTimeoutMs,
    );
    loadTimer.unref();
    const box = {
      state: { name: 'loading', restart, loadTimer },
      lane,
      calls: new CallTable(),
      children: new Set(),
      relayed: new RelayBudget(2 * MAX_RELAYED_PER_SECOND, (text) => this.log.warn(text)),
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
      clearTimeout(loadTimer);
      // The same options start every restart: only the first start (the load) can get here.
      if ((error as { name?: string }).name !== 'DataCloneError') throw error;
      throw hostError('RH_ERR_PLUGIN_OPTIONS', [
        spec.source,
        `  ${messageOf(error)}: options reach an isolated plugin as plain data (no functions, symbols or class instances)`,
      ]);
    }
    box.ready.catch(() => {}); // a restart nobody waits for any more must not be an unhandled rejection
    this.sandboxes.add(box);
    this.current[lane] = box;
    return box;
  }

  private onMessage(box: Sandbox, message: FromWorker): void {
    switch (message.type) {
      case 'loaded':
        if (box.state.name !== 'loading') break; // too late: it timed out or failed meanwhile
        enter(box, { name: 'ready' });
        box.rerunnable = rerunnableTools(message.report);
        box.settlers.resolve(message.report);
        break;
      case 'load_error':
        this.loadFailed(box, new HostError(message.code, message.message));
        break;
      case 'result': {
        const pending = box.calls.get(message.id);
        if (!pending) break; // abandoned: cancelled or timed out
        if (!pending.overran) this.budget.succeeded(); // a tool's own error is an answer too: the plugin works
        pending.settle(
          message.ok
            ? { ok: true, output: message.output }
            : { ok: false, code: 'tool_error', message: message.message },
        );
        break;
      }
      case 'log': {
        if (!box.relayed.take()) break;
        // The isolate runs the plugin's code, which can post any message past the relay: only a
        // known level, a string of bounded length (each line goes to stderr and to every MCP
        // session's replay buffer), and meta whose JSON is small (a DAG kept small by structured
        // clone would be written out on the host thread) reach the log.
        const level = isLogLevel(message.level) ? message.level : 'info';
        const raw = String(message.message);
        const text =
          raw.length > MAX_LOG_TEXT_CHARS
            ? `${raw.slice(0, MAX_LOG_TEXT_CHARS)}… [${raw.length - MAX_LOG_TEXT_CHARS} characters cut]`
            : raw;
        const meta =
          message.meta !== null && typeof message.meta === 'object' && !jsonLongerThan(message.meta, MAX_LOG_META_BYTES)
            ? message.meta
            : undefined;
        const request = typeof message.call?.id === 'number' ? box.calls.get(message.call.id)?.request : undefined;
        const scope = request ? { tool: request.tool, callId: request.callId } : callScope(message.call);
        this.log.log(level, text, scope ? { ...scope, ...meta } : (meta ?? {}));
        emitLog(request?.onLog, level, text, meta);
        break;
      }
      case 'progress': {
        if (!box.relayed.take()) break;
        // Rebuilt from its typed fields, for the same reason: MCP writes it out as JSON.
        const { done, total, message: text } = (message.progress ?? {}) as Partial<Progress>;
        if (typeof done !== 'number') break;
        box.calls
          .get(message.id)
          ?.request.onProgress?.(progressOf(done, typeof total === 'number' ? total : undefined, text));
        break;
      }
      case 'authorize':
        void this.authorize(box, message);
        break;
      case 'question':
        void this.question(box, message);
        break;
      case 'child':
        if (message.exited) box.children.delete(message.pid);
        // Reported after stop() killed the others (spawned just before it): killed now, while a
        // worker's event loop still runs to reap it; killed once the worker has ended, it would stay
        // a zombie of the host for good.
        else if (isEnding(box)) killProcessGroup(message.pid);
        else box.children.add(message.pid);
        break;
      case 'closed':
        box.onClosed?.();
        break;
      case 'fault':
        box.fault ??= { kind: 'error', reason: message.reason };
        break;
      case 'pong':
        if (box.state.name === 'retiring') {
          clearTimeout(box.state.timer);
          box.state.responsive = true;
          this.retireIfDrained(box);
        }
        break;
      case 'culprit':
        // Only a well-formed report: the plugin's code can post one too.
        if (!isEnding(box) && typeof message.id === 'number' && typeof message.tool === 'string')
          box.culprit ??= { id: message.id, tool: message.tool, timedOut: false };
        break;
    }
  }

  /** A load (first or restart) that failed: the sandbox goes, and whoever waits for it learns why. */
  private loadFailed(box: Sandbox, error: HostError): void {
    if (box.state.name !== 'loading') return;
    const { restart } = box.state;
    this.stop(box, error.message, error);
    if (restart) this.failed('crashed', `restarting failed: ${error.message}`);
  }

  /** The isolate ended by itself, or finished ending after `stop`. */
  private onExit(box: Sandbox, code: number | null, signal: NodeJS.Signals | null): void {
    this.sandboxes.delete(box);
    const lastStarted = box.isolate.lastStarted();
    const started = (id: number) => startedBy(id, lastStarted);
    if (!isEnding(box)) {
      const reason = this.deathOf(box, code, signal);
      if (box.state.name === 'loading') {
        this.loadFailed(box, hostError('RH_ERR_PLUGIN_CRASHED', [this.spec.source, reason]));
      } else {
        box.culprit ??= soleStarted(box, started);
        if (box.culprit) this.suspects.add(box.culprit.tool);
        this.stop(box, reason);
        this.failed('crashed', reason);
      }
    }
    // Every path above went through stop(): the sandbox is ending, and now gone.
    enter(box, { name: 'gone', reason: endReason(box) });
    this.endCalls(box, started);
    box.settlers.exited();
  }

  /**
   * Ends a sandbox now: a load in progress fails, its process groups are killed (the plugin can no
   * longer do it), and the isolate is killed. The calls it carries are sorted when it has exited.
   */
  private stop(box: Sandbox, reason: string, loadError?: HostError): void {
    if (isEnding(box)) return;
    const loading = box.state.name === 'loading';
    enter(box, { name: 'ending', reason });
    if (this.current[box.lane] === box) this.current[box.lane] = undefined;
    if (loading) box.settlers.reject(loadError ?? hostError('RH_ERR_PLUGIN_CRASHED', [this.spec.source, reason]));
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
    enter(box, { name: 'retiring', reason, responsive: false, timer });
    box.isolate.send({ type: 'abort', id: culprit.id, reason: { name: 'TimeoutError', message: timedOut } });
    box.isolate.send({ type: 'ping' });
  }

  private retireIfDrained(box: Sandbox): void {
    if (box.state.name !== 'retiring' || !box.state.responsive) return;
    for (const pending of box.calls.values()) if (!pending.overran) return;
    this.stop(box, box.state.reason);
  }

  /** The calls a dead isolate still carried: each runs again, or gets `crashed` (the rule at the top). */
  private endCalls(box: Sandbox, started: (id: number) => boolean): void {
    for (const [id, pending] of box.calls) {
      // The call whose own code ended the isolate is not run again, annotations or not: it would most
      // likely end the next one too, and count twice against the crash budget.
      const rerun = !started(id) || (pending.rerunnable && box.culprit?.id !== id);
      if (!this.closed && rerun) pending.settle({ rerun: started(id) ? 'started' : 'unstarted' });
      else {
        const ranTwice = started(id) && !pending.rerunnable && box.rerunnable.has(pending.request.tool);
        pending.settle({
          ok: false,
          code: 'crashed',
          message: this.cutOff(box, id, ranTwice),
          ...(ranTwice || this.closed ? { retry: false as const } : {}),
        });
      }
    }
  }

  /** Why call `id` got `crashed` when its isolate ended: the isolate's death, and whose fault it was. */
  private cutOff(box: Sandbox, id: number, ranTwice: boolean): string {
    const { culprit, isolate } = box;
    const reason = endReason(box);
    if (!culprit || culprit.id === id)
      return ranTwice ? `${reason}, on its second run (its first was cut off by another call's fault)` : reason;
    const what = culprit.timedOut
      ? `the plugin's ${isolate.noun} was stopped because ${reason}`
      : `a call to "${culprit.tool}" ended the plugin's ${isolate.noun} (${reason})`;
    const why = ranTwice
      ? 'not retried again: it had already been run a second time'
      : 'not retried, since it may already have had side effects (only calls to tools annotated readOnly or idempotent are run again)';
    return `another call's fault: ${what}; this call was cut off with it and ${why}`;
  }

  /** Sends one call to a loaded isolate and settles when it answers, is cancelled, times out or the isolate ends. */
  private post(box: Sandbox, request: RunRequest, rerunnable: boolean): Promise<Attempt> {
    const id = ++this.nextId;
    return new Promise<Attempt>((resolve) => {
      /**
       * The tool outlived its time: the isolate cannot be trusted with more calls; it is retired or
       * stopped. The call keeps its slot (and its caller's place) until the tool has really stopped,
       * as a cancelled one does: a retiring isolate runs it on while the other calls finish (the
       * dispatcher gives the slot up a whole timeout after the stop, docs/isolation.md).
       */
      const overrun = (why: string) => {
        pending.overran = true;
        if (isEnding(box)) return; // another call's fault is already ending it: the call ends with it
        const reason = `a call to "${request.tool}" ${why}`;
        const culprit = { id, tool: request.tool, timedOut: true };
        this.suspects.add(request.tool);
        if (box.state.name === 'retiring' || box.calls.size === 1) {
          box.culprit = culprit;
          this.stop(box, reason);
        } else {
          this.retire(box, culprit, reason, why);
        }
        this.failed('timeout', reason);
      };
      const onAbort = () => {
        if (!box.calls.has(id)) return;
        const { signal } = request; // aborted by now, with the reason
        if (isTimeout(signal)) {
          overrun(messageOf(signal.reason));
          return;
        }
        // The caller has its answer already; the call keeps its concurrency slot (and its caller's
        // place) until the isolate says the tool has stopped: else a caller could cancel and call
        // again to run more than its limits allow. A tool that ignores the abort for as long as
        // its timeout allows is a timed-out tool.
        const reason = signal.reason as { name?: string; message?: string } | undefined;
        box.isolate.send({
          type: 'abort',
          id,
          reason: { name: reason?.name ?? 'AbortError', message: reason?.message ?? 'cancelled' },
        });
        pending.overrun = setTimeout(() => {
          if (box.calls.has(id)) overrun(`was cancelled and still ran ${request.timeoutMs} ms later`);
        }, request.timeoutMs);
        pending.overrun.unref();
      };
      const pending: Pending = {
        request,
        rerunnable,
        settle: (outcome) => {
          clearTimeout(pending.overrun);
          box.calls.delete(id);
          resolve(outcome);
          this.retireIfDrained(box);
        },
      };
      box.calls.set(id, pending);
      request.whenStopped(onAbort);
      const run: Extract<ToWorker, { type: 'run' }> = {
        type: 'run',
        id,
        tool: request.tool,
        input: request.input,
        callId: request.callId,
      };
      if (request.sessionId) run.sessionId = request.sessionId;
      if (request.onLog) run.logAll = true;
      box.isolate.send(run);
    });
  }

  /** Answers a call's `ctx.authorize`; a call the host no longer waits for is allowed nothing. */
  private async authorize(box: Sandbox, { id, seq, input }: Extract<FromWorker, { type: 'authorize' }>): Promise<void> {
    const request = box.calls.get(id)?.request;
    const result = request ? await request.authorize(input) : CALL_ENDED;
    if (!isEnding(box)) box.isolate.send({ type: 'authorized', id, seq, result });
  }

  /** Answers a call's `ctx.elicit` or `ctx.sample` (the call checks and bounds them); a call no longer in flight gets none. */
  private async question(box: Sandbox, { id, seq, kind, request }: Extract<FromWorker, { type: 'question' }>) {
    const call = box.calls.get(id)?.request;
    let answer: Extract<ToWorker, { type: 'answer' }>;
    try {
      if (!call) throw new Error(`ctx.${kind}: the call has ended`);
      const result = await (kind === 'sample' ? call.sample(request) : call.elicit(request));
      answer = { type: 'answer', id, seq, ok: true, result };
    } catch (error) {
      answer = { type: 'answer', id, seq, ok: false, message: messageOf(error) };
    }
    if (!isEnding(box)) box.isolate.send(answer);
  }

  /** Counts a crash or timeout against the budget; logs and audits it, and the quarantine it may start. */
  private failed(kind: 'crashed' | 'timeout', reason: string): void {
    const quarantine = reportFailure(
      this.budget,
      { log: this.log, audit: this.audit },
      {
        kind,
        plugin: this.name,
        subject: `plugin ${this.name}`,
        reason,
        next: `its ${this.isolation} restarts for the next call`,
      },
    );
    if (quarantine) return;
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
    if (box.state.name !== 'loading') return `the ${noun} ${how}`;
    return `the ${noun} ${how} before the plugin finished loading (a top-level await or setup() waiting on something that never happens?)`;
  }
}

/** When an isolate dies of an unnamed fault (out of memory) with one call started on it, that call's. */
function soleStarted(box: Sandbox, started: (id: number) => boolean): Sandbox['culprit'] {
  const begun = [...box.calls].filter(([id]) => started(id));
  if (begun.length !== 1) return undefined;
  const [id, pending] = begun[0]!;
  return { id, tool: pending.request.tool, timedOut: false };
}

/**
 * Whether call `id` had started, given the last call whose `execute` began. An isolate takes its calls
 * in the order they were sent and starts each as it takes it, so every call up to that one had. The
 * ids are compared as 32-bit serial numbers (a thread records them in an Int32Array): right however
 * long the host runs, while fewer than 2^31 calls are in flight.
 */
function startedBy(id: number, lastStarted: number): boolean {
  return ((lastStarted - id) | 0) >= 0;
}

/** The tool and call id a log line of a call no longer in flight says it came from, when they are strings. */
function callScope(call: unknown): { tool: string; callId: string } | undefined {
  const { tool, callId } = (call ?? {}) as { tool?: unknown; callId?: unknown };
  return typeof tool === 'string' && typeof callId === 'string' ? { tool, callId } : undefined;
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

/** Waits `ms` (false when the signal aborts first); the timer never outlives the wait or holds the process open. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  // Taken here, not imported: a host of inline plugins never loads it.
  return process
    .getBuiltinModule('node:timers/promises')
    .setTimeout(ms, true, { signal, ref: false })
    .catch(() => false);
}
