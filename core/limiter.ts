/**
 * A plugin's concurrency slots: at most `max` calls run at once, at most `maxQueue` wait, and a
 * waiting call leaves the queue when its signal aborts (its timeout covers the wait).
 */
export type Acquired = 'acquired' | 'queue_full' | 'aborted';

export class Limiter {
  private active = 0;
  private readonly waiting: Array<(ok: boolean) => void> = [];
  private idleWaiters: Array<() => void> = [];

  readonly max: number;
  readonly maxQueue: number;

  constructor(max: number, maxQueue: number) {
    this.max = max;
    this.maxQueue = maxQueue;
  }

  /** Takes a slot now when one is free: the common path costs no promise. */
  tryAcquire(): boolean {
    if (this.active >= this.max) return false;
    this.active++;
    return true;
  }

  /** Waits for a slot; call after `tryAcquire()` said no. */
  wait(signal: AbortSignal): Promise<Acquired> {
    if (this.waiting.length >= this.maxQueue) return Promise.resolve('queue_full');
    if (signal.aborted) return Promise.resolve('aborted');
    return new Promise((resolve) => {
      const onAbort = () => {
        const i = this.waiting.indexOf(grant);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve('aborted');
      };
      const grant = (ok: boolean) => {
        signal.removeEventListener('abort', onAbort);
        resolve(ok ? 'acquired' : 'aborted');
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next)
      next(true); // the slot passes straight to the next caller
    else if (--this.active === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Resolves once no call holds a slot or waits for one (a reloaded plugin's old version closes then). */
  whenIdle(): Promise<void> {
    if (this.active === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  get stats(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }
}
