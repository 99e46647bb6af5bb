/**
 * Limits per caller on the MCP HTTP front end (`serve.limits`, docs/serve.md "Per-caller policy
 * and limits"): a token bucket of `callsPerSecond` (bursts of as many, refilled continuously) and a
 * count of calls in flight, both kept by caller name. A refusal says which limit and how many whole
 * seconds to wait, which is what HTTP's `Retry-After` carries.
 */
import type { CallerLimitsConfig } from '../config-schema.ts';

/** The name that callers without one (no authentication, on loopback) share. */
export const ANONYMOUS_CALLER = 'anonymous';

/** Callers whose state is kept; past it, the one unused longest with no call in flight is forgotten. */
const MAX_CALLERS = 10_000;

export type CallerLimit = 'callsPerSecond' | 'inFlight';

export type Admission =
  | {
      ok: true;
      places: CallPlaces;
      /** The request is over: gives back the places of calls that never entered a handler. */
      close(): void;
    }
  | { ok: false; limit: CallerLimit; retryAfterSeconds: number; message: string };

/** The in-flight places of a request's calls, each given back when its call has really stopped. */
export interface CallPlaces {
  /** A call reached its handler: it holds its place until it has left and its tool has stopped. */
  enter(): CallPlace;
}

/**
 * One call's place. A cancelled call is answered at once, while its tool may run on (one that
 * ignores its signal): the place is given back only once the handler has left and every run of
 * the tool it started has stopped, or a caller could cancel and call again past its limit.
 */
export interface CallPlace {
  /** `CallOptions.onRun`: the tool started; the place is held until the returned function is called. */
  onRun: () => () => void;
  /** The handler is done with the call (answered it, or the call was cancelled). */
  leave(): void;
}

interface CallerState {
  /** Calls the bucket holds, as of `at`. */
  tokens: number;
  at: number;
  inFlight: number;
}

export interface CallerLimitsOptions {
  /** Milliseconds on a monotonic clock. Default: `performance.now`. */
  now?: () => number;
  /** Default 10,000. */
  maxCallers?: number;
}

export class CallerLimits {
  private readonly rate: number | undefined;
  private readonly burst: number;
  private readonly inFlight: number | undefined;
  private readonly now: () => number;
  private readonly maxCallers: number;
  /** In order of last use, oldest first. */
  private readonly callers = new Map<string, CallerState>();

  constructor(config: CallerLimitsConfig, options: CallerLimitsOptions = {}) {
    this.rate = config.callsPerSecond;
    // Under one call per second, a bucket of `rate` calls would never hold a whole call.
    this.burst = Math.max(1, config.callsPerSecond ?? 0);
    this.inFlight = config.inFlight;
    this.now = options.now ?? (() => performance.now());
    this.maxCallers = options.maxCallers ?? MAX_CALLERS;
  }

  /** Callers whose state is kept. */
  get size(): number {
    return this.callers.size;
  }

  /** Takes `calls` calls for `caller` now, from both limits, or none and says why. */
  admit(caller: string, calls: number): Admission {
    const state = this.stateOf(caller);
    const who = caller === ANONYMOUS_CALLER ? 'callers without a name' : `caller "${caller}"`;
    if (this.rate !== undefined) {
      const now = this.now();
      state.tokens = Math.min(this.burst, state.tokens + ((now - state.at) / 1000) * this.rate);
      state.at = now;
      if (calls > this.burst) {
        return refused(
          'callsPerSecond',
          1,
          `A batch of ${calls} tool calls is more than ${who} may send at once (serve.limits.callsPerSecond: ${this.rate}); send fewer calls per request.`,
        );
      }
      if (state.tokens < calls) {
        const seconds = Math.max(1, Math.ceil((calls - state.tokens) / this.rate));
        return refused(
          'callsPerSecond',
          seconds,
          `Too many tool calls: ${who} is over the limit of ${this.rate} calls per second (serve.limits.callsPerSecond); retry after ${seconds} s.`,
        );
      }
    }
    if (this.inFlight !== undefined && state.inFlight + calls > this.inFlight) {
      const many =
        calls > this.inFlight ? `A batch of ${calls} tool calls is more than` : 'Too many tool calls in flight:';
      return refused(
        'inFlight',
        1,
        `${many} ${who} may have ${this.inFlight} running at once (serve.limits.inFlight, ${state.inFlight} running now); retry after 1 s, once a call has finished.`,
      );
    }
    if (this.rate !== undefined) state.tokens -= calls;
    state.inFlight += calls;
    let held = calls;
    let running = 0;
    const giveBack = (count: number) => {
      const given = Math.min(count, held);
      held -= given;
      state.inFlight -= given;
    };
    return {
      ok: true,
      places: {
        enter: () => {
          running++;
          // The handler, and each run of the tool not yet stopped.
          let holds = 1;
          const release = () => {
            if (--holds !== 0) return;
            running--;
            giveBack(1);
          };
          let left = false;
          return {
            onRun: () => {
              holds++;
              let stopped = false;
              return () => {
                if (stopped) return;
                stopped = true;
                release();
              };
            },
            leave: () => {
              if (left) return;
              left = true;
              release();
            },
          };
        },
      },
      close: () => giveBack(held - running),
    };
  }

  /** The caller's state, made the most recently used; a new caller's bucket is full. */
  private stateOf(caller: string): CallerState {
    let state = this.callers.get(caller);
    if (state) {
      this.callers.delete(caller);
    } else {
      state = { tokens: this.burst, at: this.now(), inFlight: 0 };
      if (this.callers.size >= this.maxCallers) this.forgetOneIdle();
    }
    this.callers.set(caller, state);
    return state;
  }

  /**
   * Forgets the caller unused longest with no call in flight: its bucket has had the longest to
   * refill. Callers with calls in flight are kept, or their places would never be given back.
   */
  private forgetOneIdle(): void {
    for (const [name, state] of this.callers) {
      if (state.inFlight === 0) {
        this.callers.delete(name);
        return;
      }
    }
  }
}

function refused(limit: CallerLimit, retryAfterSeconds: number, message: string): Admission {
  return { ok: false, limit, retryAfterSeconds, message };
}
