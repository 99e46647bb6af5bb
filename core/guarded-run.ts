/**
 * One tool run under the call's guards: a concurrency slot of its plugin, the timeout, the
 * caller's cancellation and the host's close. Whatever the runner does, the call is answered once:
 * on expiry the run's signal aborts with a `TimeoutError` and the answer is `timeout` at once; an
 * answer that arrives later is dropped.
 */
// `performance` is the global, not node:perf_hooks' binding: importing that module costs every host start
// ~5 M instructions, the global's accessor ~5 ns a read (docs/plugins.md, "How a plugin is loaded").
import { abortable } from './abortable.ts';
import type { Authorization, ElicitResult, SampleResult } from './contract.ts';
import { deadline, type Deadline } from './deadlines.ts';
import { messageOf, type ResultCode } from './errors.ts';
import type { List, ListNode } from './list.ts';
import type { Logger } from './log.ts';
import { outcomeFailure } from './output.ts';
import type { Failed, Step } from './step.ts';
import { readElicitRequest, readElicitResult, readSampleRequest, readSampleResult } from './questions.ts';
import type { RegisteredTool } from './registry.ts';
import {
  AUTHORIZE_BUDGET_SPENT,
  CALL_ENDED,
  MAX_AUTHORIZE_PER_CALL,
  type RunOutcome,
  type RunRequest,
  timeoutReason,
} from './runners/runner.ts';
import type { Asking, CallOptions } from './types.ts';

/** What a guarded run needs of the call it belongs to. */
export interface GuardedCall {
  readonly env: {
    log: Logger;
    /** Host shutdown: aborts every call in flight. */
    closing: AbortSignal;
    /** Each run in flight; the host shuts them down on close (cheaper than a listener per call). */
    inflight: List<Shutdown>;
  };
  readonly id: string;
  readonly options: CallOptions;
  /** `ctx.authorize`: judges another input for this tool within this call; `signal` ends the wait. */
  authorize(input: unknown, signal: AbortSignal): Promise<Authorization>;
}

/** A run in flight, as the host's close sees it. */
export interface Shutdown {
  /** Ends the run at once with `cancelled`: the host is closing. */
  shutdown(): void;
}

/** How a run ended: the tool's output, or the failure the call answers with. */
export type Ran = Step<{ output: unknown }>;

/**
 * Takes a concurrency slot and runs the tool, all under one timeout. One object per call carries
 * the state (and is the runner's request), so the hot path allocates little: the AbortController
 * is made only when someone reads `signal` (it costs ~2 µs on Node 20, most of a call's overhead).
 */
export function runGuarded(call: GuardedCall, tool: RegisteredTool, input: unknown): Promise<Ran> {
  return new Promise<Ran>((resolve) => new GuardedRun(call, tool, input, resolve).start());
}

class GuardedRun implements RunRequest, Shutdown {
  readonly tool: string;
  readonly input: unknown;
  readonly callId: string;
  readonly sessionId?: string;
  private readonly progressTo?: CallOptions['onProgress'];
  private readonly logTo?: CallOptions['onLog'];
  private readonly call: GuardedCall;
  private readonly registered: RegisteredTool;
  private readonly external?: AbortSignal;
  private readonly resolve: (ran: Ran) => void;
  private controller?: AbortController;
  private abortedWith?: unknown;
  private settled = false;
  /** `ctx.authorize` questions asked so far: capped, as each may prompt the user and writes an audit line. */
  private questions = 0;
  /** The runner has the call and has not answered yet: the slot is ours. */
  private running = false;
  private deadline?: Deadline;
  /** Its place among the host's runs in flight. */
  private listed?: ListNode<Shutdown>;
  /** The time left on the call's clock when it last started or resumed (`ctx.elicit` stops it), and when that was. */
  private clockLeft = 0;
  private clockSince = 0;
  /** A `ctx.elicit` or `ctx.sample` is waiting for its answer: one at a time, so a plugin cannot flood the user or the model. */
  private asking = false;
  private abandon?: NodeJS.Timeout;
  /** Told once the runner is done with the call (`CallOptions.onRun`). */
  private ranOut?: () => void;
  private onStopped?: () => void;
  /** The caller's signal's listener: made only for a call with a signal still running after its first tick. */
  private onCancel?: () => void;

  constructor(call: GuardedCall, tool: RegisteredTool, input: unknown, resolve: (ran: Ran) => void) {
    const { options } = call;
    this.call = call;
    this.registered = tool;
    this.tool = tool.info.name;
    this.input = input;
    this.callId = call.id;
    if (options.sessionId) this.sessionId = options.sessionId;
    if (options.signal) this.external = options.signal;
    // Named one by one: a caller's object must not reach this run's own fields (`onStopped`).
    if (options.onProgress) this.progressTo = options.onProgress;
    if (options.onLog) this.logTo = options.onLog;
    this.resolve = resolve;
  }

  /**
   * The caller hears the call's progress and log lines until it is answered: a tool still running
   * after that (an inline one that ignores its signal) must not reach a caller that has moved on.
   */
  get onProgress(): CallOptions['onProgress'] {
    return this.settled ? undefined : this.progressTo;
  }

  get onLog(): CallOptions['onLog'] {
    return this.settled ? undefined : this.logTo;
  }

  get stopped(): boolean {
    return this.abortedWith !== undefined;
  }

  authorize(input: unknown): Promise<Authorization> {
    // A tool still running after its answer (an inline one that ignores its signal) gets nothing more.
    if (this.settled) return Promise.resolve(CALL_ENDED);
    if (++this.questions > MAX_AUTHORIZE_PER_CALL) return Promise.resolve(AUTHORIZE_BUDGET_SPENT);
    return this.call.authorize(input, this.signal);
  }

  /**
   * `ctx.elicit`: the call's `elicit` handler asks the user. A person may take their time, so the
   * call's timeout stands still until the answer comes; cancellation and the host's close still end
   * the wait.
   */
  elicit(value: unknown): Promise<ElicitResult> {
    return this.ask('ctx.elicit', async (from) => {
      const request = readElicitRequest(value);
      const handler = this.call.options.elicit;
      if (!handler)
        throw new Error(
          'ctx.elicit: no one can be asked here (no terminal, and the caller offered no way to ask the user, such as an MCP client with the elicitation capability)',
        );
      this.pauseClock();
      try {
        return readElicitResult(
          await abortable(handler(request, from), { signal: from.signal }),
          request.requestedSchema,
        );
      } finally {
        this.resumeClock();
      }
    });
  }

  /** `ctx.sample`: the call's `sample` handler asks a model; its time counts against the call's timeout. */
  sample(value: unknown): Promise<SampleResult> {
    return this.ask('ctx.sample', async (from) => {
      const request = readSampleRequest(value);
      const handler = this.call.options.sample;
      if (!handler)
        throw new Error(
          'ctx.sample: no model can be asked here (the agent loop offers its own; over MCP a client with the sampling capability does)',
        );
      return readSampleResult(await abortable(handler(request, from), { signal: from.signal }));
    });
  }

  /** One question of the call at a time, and none once the call has its answer; an error says which rule stopped it. */
  private async ask<T>(what: string, asking: (from: Asking) => Promise<T>): Promise<T> {
    if (this.settled) throw new Error(`${what}: the call has ended`);
    if (this.asking) throw new Error(`${what}: another question of this call is still open; ask one at a time`);
    this.asking = true;
    const { signal } = this;
    try {
      return await asking({ tool: this.tool, callId: this.callId, ...this.session(), signal });
    } catch (error) {
      if (signal.aborted)
        throw new Error(`${what}: the call ended before the answer came (${messageOf(signal.reason)})`);
      throw error;
    } finally {
      this.asking = false;
    }
  }

  private session(): { sessionId?: string } {
    return this.sessionId ? { sessionId: this.sessionId } : {};
  }

  private pauseClock(): void {
    if (!this.deadline) return;
    this.deadline.cancel();
    this.deadline = undefined;
    this.clockLeft -= performance.now() - this.clockSince;
  }

  /** The clock runs on with what was left (a timer of its own: rare, and not worth a queue in deadlines.ts). */
  private resumeClock(): void {
    if (this.settled || this.deadline) return;
    this.clockSince = performance.now();
    const timer = setTimeout(this.expire, Math.max(1, Math.ceil(this.clockLeft)));
    this.deadline = { cancel: () => clearTimeout(timer) };
  }

  private cancel(): void {
    this.stop(
      this.external?.reason ?? new DOMException('cancelled', 'AbortError'),
      'cancelled',
      `Call to "${this.tool}" was cancelled.`,
    );
  }

  /**
   * Listens to the caller's signal from the end of the tick the run started in: a run settled by
   * then (an inline tool that answers at once, over MCP most calls) never adds a listener, which
   * with its removal cost such a call more than its two audit lines (EventTarget's listener
   * bookkeeping). A signal aborted within that tick is acted on here, at its end.
   */
  private watchCaller(signal: AbortSignal): void {
    if (this.settled) return;
    if (signal.aborted) {
      this.cancel();
      return;
    }
    this.onCancel = () => this.cancel();
    signal.addEventListener('abort', this.onCancel, { once: true });
  }

  shutdown(): void {
    this.stop(
      new DOMException('host closed', 'AbortError'),
      'cancelled',
      `Call to "${this.tool}" was cancelled: the host is closing.`,
    );
  }

  private readonly expire = () => {
    const limit = this.registered.timeoutMs;
    this.stop(
      timeoutReason(limit),
      'timeout',
      `Tool "${this.tool}" timed out after ${limit} ms. Try a smaller request, or another approach.`,
    );
  };

  whenStopped(listener: () => void): void {
    if (this.stopped) queueMicrotask(listener);
    else this.onStopped = listener;
  }

  get timeoutMs(): number {
    return this.registered.timeoutMs;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith !== undefined) this.controller.abort(this.abortedWith);
    }
    return this.controller.signal;
  }

  start(): void {
    if (this.external?.aborted) {
      this.cancel();
      return;
    }
    if (this.call.env.closing.aborted) {
      this.shutdown();
      return;
    }
    this.clockLeft = this.registered.timeoutMs;
    this.clockSince = performance.now();
    this.deadline = deadline(this.registered.timeoutMs, this.expire);
    const { external } = this;
    if (external) process.nextTick(() => this.watchCaller(external));
    this.listed = this.call.env.inflight.push(this);
    const { limiter } = this.registered.plugin;
    if (limiter.tryAcquire()) {
      this.run();
      return;
    }
    void limiter.wait(this.signal).then((got) => {
      if (got === 'acquired') {
        if (this.settled) limiter.release();
        else this.run();
      } else if (got === 'queue_full') {
        this.settle({
          ok: false,
          code: 'tool_error',
          content: `Plugin "${this.registered.plugin.name}" is busy (${limiter.max} calls running, ${limiter.maxQueue} waiting). Try again later.`,
        });
      }
    });
  }

  /**
   * The slot is held until the runner itself is done, not merely until the call was answered: an
   * inline tool that ignores its signal is still running after its timeout, and counts.
   */
  private run(): void {
    const { runner } = this.registered.plugin;
    this.running = true;
    this.ranOut = this.call.options.onRun?.();
    let running: Promise<RunOutcome>;
    try {
      running = runner!.run(this);
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(
      (outcome) => {
        this.releaseSlot();
        this.settle(outcome.ok ? outcome : outcomeFailure(this.tool, outcome));
      },
      (error: unknown) => {
        this.releaseSlot();
        this.settle(outcomeFailure(this.tool, { ok: false, code: 'crashed', message: messageOf(error) }));
      },
    );
  }

  /**
   * Gives the slot back once. A run that outlives its stop by another full timeout (an inline tool
   * that never settles) gives it back anyway, with a warning: else it would block its plugin forever.
   */
  private releaseSlot(): void {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.abandon);
    this.registered.plugin.limiter.release();
    this.ranOut?.();
  }

  /** Ends the call early: aborts the signal the tool sees, and answers at once. */
  private stop(reason: unknown, code: ResultCode, content: string): void {
    this.abortedWith ??= reason;
    this.controller?.abort(reason);
    const listener = this.onStopped;
    this.onStopped = undefined;
    listener?.();
    if (this.running && !this.settled) {
      this.abandon = setTimeout(() => {
        this.call.env.log.warn(
          `tool "${this.tool}" still running ${this.registered.timeoutMs} ms after it was stopped; its concurrency slot is released`,
        );
        this.releaseSlot();
      }, this.registered.timeoutMs).unref();
    }
    this.settle({ ok: false, code, content } satisfies Failed);
  }

  private settle(ran: Ran): void {
    if (this.settled) return; // a late answer after a timeout or a cancellation is dropped here
    this.settled = true;
    this.deadline?.cancel();
    if (this.onCancel) this.external!.removeEventListener('abort', this.onCancel);
    if (this.listed) this.call.env.inflight.remove(this.listed);
    this.resolve(ran);
  }
}
