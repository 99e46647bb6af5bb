/**
 * Waiting for something, but not past a signal or a deadline: the one way the host races a promise
 * against an abort or a timer. The listener and the timer go as soon as the race is decided, so a
 * long-lived signal (the host's close) does not collect a listener per wait.
 */

export interface AbortableOptions {
  /** Gives up when it aborts, rejecting with its reason. */
  signal?: AbortSignal | undefined;
  /**
   * Gives up after this long. Unlike `AbortSignal.timeout`, the timer keeps the process alive: a
   * grace period or a load is waited out, not cut short by an exit.
   */
  timeoutMs?: number;
  /** What a timeout rejects with; a `TimeoutError` DOMException by default. */
  onTimeout?: () => unknown;
}

/**
 * `pending`'s outcome, unless the signal aborts or the time runs out first. A rejection of `pending`
 * after that is dropped: nobody waits for it any more.
 */
export function abortable<T>(
  pending: T | PromiseLike<T>,
  { signal, timeoutMs, onTimeout }: AbortableOptions,
): Promise<T> {
  if (signal?.aborted) {
    Promise.resolve(pending).catch(() => {});
    return Promise.reject(signal.reason);
  }
  if (!signal && timeoutMs === undefined) return Promise.resolve(pending);
  return new Promise<T>((resolve, reject) => {
    const giveUp = (reason: unknown) => {
      cleanUp();
      reject(reason);
    };
    const onAbort = () => giveUp(signal?.reason);
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => giveUp(onTimeout ? onTimeout() : timeoutReason(timeoutMs)), timeoutMs);
    const cleanUp = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(pending).then(
      (value) => {
        cleanUp();
        resolve(value);
      },
      (error: unknown) => giveUp(error),
    );
  });
}

/** The reason a timeout aborts with: a `TimeoutError`, as `AbortSignal.timeout` uses. */
export function timeoutReason(ms: number): DOMException {
  return new DOMException(`timed out after ${ms} ms`, 'TimeoutError');
}
