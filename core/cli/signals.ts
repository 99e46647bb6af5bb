/**
 * The stop signals, handled in one place for every command. Ctrl-C (SIGINT), SIGTERM (`kill`, a
 * supervisor, `timeout`) and SIGHUP (the terminal went away) all stop the command the same way:
 * the calls in flight are cancelled, the host closes (ending plugins and the commands they started,
 * flushing the audit trail), and the CLI exits 128 + the signal's number (130, 143, 129). Node's
 * default for each would end the process at once and leave those commands running.
 *
 * A second stop signal while the host closes exits at once: the user asked twice.
 */
import { constants } from 'node:os';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

export interface Stop {
  /** Aborted on the first stop signal. */
  readonly signal: AbortSignal;
  /** The stop signal received, if any. */
  readonly received: StopSignal | undefined;
  /**
   * While `handler` is set, Ctrl-C calls it instead of stopping the command (the REPL cancels the
   * turn in flight). SIGTERM and SIGHUP still stop it. Returns the function that unsets it.
   */
  onInterrupt(handler: () => void): () => void;
  /**
   * The command has finished what the signal asked of it, cleanly (`serve` drains its calls and
   * exits 0: SIGTERM is how a supervisor stops a server): its own exit code stands, not 128 + N.
   */
  stoppedCleanly(): void;
  /** Whether `stoppedCleanly()` was called. */
  readonly clean: boolean;
}

/** 128 + the signal's number: the shell's convention for a process ended by a signal. */
export function signalExitCode(signal: StopSignal): number {
  return 128 + constants.signals[signal];
}

/** Handles the stop signals until `release()`. */
export function trapStopSignals(): Stop & { release(): void } {
  const controller = new AbortController();
  let received: StopSignal | undefined;
  let interrupt: (() => void) | undefined;
  let clean = false;
  const on = (signal: StopSignal) => {
    if (signal === 'SIGINT' && interrupt && !received) return interrupt();
    if (received) process.exit(signalExitCode(signal));
    received = signal;
    controller.abort();
  };
  const handlers = STOP_SIGNALS.map((signal) => [signal, () => on(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  return {
    signal: controller.signal,
    get received() {
      return received;
    },
    get clean() {
      return clean;
    },
    stoppedCleanly() {
      clean = true;
    },
    onInterrupt(handler) {
      interrupt = handler;
      return () => {
        if (interrupt === handler) interrupt = undefined;
      };
    },
    release() {
      for (const [signal, handler] of handlers) process.off(signal, handler);
    },
  };
}
