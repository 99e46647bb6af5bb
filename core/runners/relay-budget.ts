/**
 * How many log lines and progress reports of an isolated plugin reach the host: each goes to
 * stderr, to the MCP sessions' logs and to the caller, so a plugin logging in a loop must not flood
 * them. The worker's entry keeps to it before sending (sending costs too); the host holds the
 * plugin to it again, since the plugin's code can post past the entry.
 */

/** Log lines plus progress reports relayed per second. */
export const MAX_RELAYED_PER_SECOND = 500;

/**
 * A one-second window in which `perSecond` pass; the rest are counted, and `report` told their
 * number once the window ends.
 */
export class RelayBudget {
  private readonly perSecond: number;
  private readonly report: (text: string) => void;
  private windowStart = 0;
  private passed = 0;
  private dropped = 0;

  constructor(perSecond: number, report: (text: string) => void) {
    this.perSecond = perSecond;
    this.report = report;
  }

  /** Whether one more passes now. */
  take(): boolean {
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.passed = 0;
    }
    if (this.passed >= this.perSecond) {
      if (this.dropped++ === 0) setTimeout(() => this.flush(), this.windowStart + 1000 - now).unref();
      return false;
    }
    this.passed++;
    return true;
  }

  private flush(): void {
    this.report(`dropped ${this.dropped} log lines and progress reports (over ${this.perSecond} a second)`);
    this.dropped = 0;
  }
}
