/**
 * One tool run under the call's guards: a concurrency slot of its plugin, the timeout, the
 * caller's cancellation and the host's close. Whatever the runner does, the call is answered once:
 * on expiry the run's signal aborts with a `TimeoutError` and the answer is `timeout` at once; an
 * answer that arrives later is dropped.
 */
import type { Authorization } from './contract.ts';
import { deadline, type Deadline } from './deadlines.ts';
import { messageOf, type ResultCode } from './errors.ts';
import type { Logger } from './log.ts';
import { type Failed, outcomeFailure, type Step } from './output.ts';
import type { RegisteredTool } from './registry.ts';
import {
  AUTHORIZE_BUDGET_SPENT,
  CALL_ENDED,
  MAX_AUTHORIZE_PER_CALL,
  type RunOutcome,
  type RunRequest,
  timeoutReason,
} from './runners/runner.ts';
import type { CallOptions } from './types.ts';

/** What a guarded run needs of the call it belongs to. */
export interface GuardedCall {
  readonly env: {
    log: Logger;
    /** Host shutdown: aborts every call in flight. */
    closing: AbortSignal;
    /** Cancels each call in flight; the host runs them on close (cheaper than a listener per call). */
    inflight: Set<() => void>;
  };
  readonly id: string;
  readonly options: CallOptions;
  /** `ctx.authorize`: judges another input for this tool within this call; `signal` ends the wait. */
  authorize(input: unknown, signal: AbortSignal): Promise<Authorization>;
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

class GuardedRun implements RunRequest {
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
  private abandon?: NodeJS.Timeout;
  private onStopped?: () => void;
  private readonly cancel = () =>
    this.stop(
      this.external?.reason ?? new DOMException('cancelled', 'AbortError'),
      'cancelled',
      `Call to "${this.tool}" was cancelled.`,
    );
  private readonly shutdown = () =>
    this.stop(
      new DOMException('host closed', 'AbortError'),
      'cancelled',
      `Call to "${this.tool}" was cancelled: the host is closing.`,
    );

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

  whenStopped(listener: () => void): void {
    if (this.stopped) queueMicrotask(listener);
    else this.onStopped = listener;
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
    const limit = this.registered.timeoutMs;
    this.deadline = deadline(limit, () =>
      this.stop(
        timeoutReason(limit),
        'timeout',
        `Tool "${this.tool}" timed out after ${limit} ms. Try a smaller request, or another approach.`,
      ),
    );
    this.external?.addEventListener('abort', this.cancel, { once: true });
    this.call.env.inflight.add(this.shutdown);
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
    this.external?.removeEventListener('abort', this.cancel);
    this.call.env.inflight.delete(this.shutdown);
    this.resolve(ran);
  }
}
