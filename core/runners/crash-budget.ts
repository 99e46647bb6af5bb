/**
 * A plugin's crash budget, after VS Code's extension host: each crash or timeout that ended a worker or process
 * is a failure; `failures` of them within `windowMs` quarantine the plugin for `cooldownMs`, so a
 * plugin that dies on every call stops being restarted. Between failures in a row, restarts back off
 * exponentially; a call that succeeds resets the streak.
 */
import type { PluginHealth } from './runner.ts';

export interface QuarantinePolicy {
  failures: number;
  windowMs: number;
  cooldownMs: number;
}

const BACKOFF_BASE_MS = 100;
const BACKOFF_MAX_MS = 5_000;

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
    return this.quarantine ?? { quarantined: false };
  }
}
