/**
 * A plugin's crash budget, after VS Code's extension host: each crash or timeout that ended a worker or process
 * is a failure; `failures` of them within `windowMs` quarantine the plugin for `cooldownMs`, so a
 * plugin that dies on every call stops being restarted. Between failures in a row, restarts back off
 * exponentially; a call that succeeds resets the streak.
 */
import type { AuditSink } from '../audit.ts';
import type { Logger } from '../log.ts';
import type { PluginHealth } from './runner.ts';

export interface QuarantinePolicy {
  failures: number;
  windowMs: number;
  cooldownMs: number;
}

const BACKOFF_BASE_MS = 100;
const BACKOFF_MAX_MS = 5_000;
/** Read before every call: one object, not one per call. */
const HEALTHY: PluginHealth = Object.freeze({ quarantined: false });

export class CrashBudget {
  private readonly policy: QuarantinePolicy;
  private readonly clock: () => number;
  private recent: number[] = [];
  private streak = 0;
  private lastFailureAt = 0;
  private quarantine: Required<PluginHealth> | undefined;

  /** `clock` (epoch ms) is what every method reads when not given `now`. */
  constructor(policy: QuarantinePolicy, clock: () => number = Date.now) {
    this.policy = policy;
    this.clock = clock;
  }

  /** Counts a failure; returns the quarantine when this failure started one. */
  record(reason: string, now = this.clock()): Required<PluginHealth> | undefined {
    this.streak++;
    this.lastFailureAt = now;
    this.recent = this.recent.filter((t) => now - t < this.policy.windowMs);
    this.recent.push(now);
    if (this.quarantine || this.recent.length < this.policy.failures) return undefined;
    const until = now + this.policy.cooldownMs;
    this.quarantine = {
      quarantined: true,
      until,
      reason: `${this.recent.length} crashes or timeouts within ${this.policy.windowMs} ms (last: ${reason}); calls fail until ${new Date(until).toISOString()}`,
    };
    return this.quarantine;
  }

  succeeded(): void {
    this.streak = 0;
  }

  /** How long to wait before starting the next worker or process. */
  restartDelay(now = this.clock()): number {
    if (this.streak === 0) return 0;
    const backoff = Math.min(BACKOFF_BASE_MS * 2 ** (this.streak - 1), BACKOFF_MAX_MS);
    return Math.max(0, this.lastFailureAt + backoff - now);
  }

  /** The quarantine lifts by itself once the cooldown has passed, with a clean slate. */
  health(now = this.clock()): PluginHealth {
    if (this.quarantine && now >= this.quarantine.until) {
      this.quarantine = undefined;
      this.recent = [];
      this.streak = 0;
    }
    return this.quarantine ?? HEALTHY;
  }
}

/** One crash or timeout of a plugin, as its runner tells it. */
export interface Failure {
  kind: 'crashed' | 'timeout';
  /** The plugin's name, for the audit trail. */
  plugin: string;
  /** Who failed, in a log line: `plugin echo`, `MCP server "docs"`. */
  subject: string;
  reason: string;
  /** What happens next, when no quarantine starts: `its worker restarts for the next call`. */
  next: string;
  /** Appended to the log lines (an MCP server's last stderr lines). */
  detail?: string;
}

/**
 * Counts a failure against the budget and tells it: a warning and an audit line, then an error and
 * an audit line for the quarantine it may start, which it returns. Every runner that restarts what
 * failed reports through here, so the log and the audit trail read the same for all of them.
 */
export function reportFailure(
  budget: CrashBudget,
  { log, audit }: { log: Logger; audit: AuditSink },
  failure: Failure,
): Required<PluginHealth> | undefined {
  const { kind, plugin, subject, reason, next, detail = '' } = failure;
  const quarantine = budget.record(reason);
  log.warn(`${subject} ${kind === 'timeout' ? 'timed out' : 'crashed'}: ${reason}; ${next}${detail}`);
  audit.write({ event: 'plugin', plugin, state: kind, reason });
  if (!quarantine) return undefined;
  log.error(`${subject} quarantined: ${quarantine.reason}${detail}`);
  audit.write({
    event: 'plugin',
    plugin,
    state: 'quarantined',
    reason: quarantine.reason,
    until: new Date(quarantine.until).toISOString(),
  });
  return quarantine;
}
