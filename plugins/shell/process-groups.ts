/**
 * The process groups a plugin instance started. Each command runs as the leader of its own group,
 * so signalling the group reaches everything it spawned, background jobs included (short of a
 * `setsid` escape, which only a sandbox stops). Groups that outlive their command (a background
 * job) stay tracked until they are gone, and all of them are ended when the host closes, or by the
 * host's watchdog when the host dies without closing (SIGKILL).
 */
import { unwatch, watch } from '../../core/runners/watchdog.ts';

export class ProcessGroups {
  readonly #groups = new Set<number>();

  add(pgid: number): void {
    this.#groups.add(pgid);
    watch(pgid);
  }

  /** Whether any process of the group is left. Drops the group from the set when none is. */
  alive(pgid: number): boolean {
    const alive = signalGroup(pgid, 0);
    if (!alive) this.#forget(pgid);
    return alive;
  }

  /** SIGTERM to the group now, SIGKILL after `graceMs` to whatever ignored it. */
  terminate(pgid: number, graceMs: number): void {
    if (!signalGroup(pgid, 'SIGTERM')) {
      this.#forget(pgid);
      return;
    }
    setTimeout(() => {
      signalGroup(pgid, 'SIGKILL');
      this.#forget(pgid);
    }, graceMs);
  }

  terminateAll(graceMs: number): void {
    for (const pgid of [...this.#groups]) this.terminate(pgid, graceMs);
  }

  /** SIGKILL to every group, synchronously: for `process.on('exit')`, where no timer runs. */
  killAll(): void {
    for (const pgid of [...this.#groups]) {
      signalGroup(pgid, 'SIGKILL');
      this.#forget(pgid);
    }
  }

  #forget(pgid: number): void {
    this.#groups.delete(pgid);
    unwatch(pgid);
  }

  /** Forgets groups that ended on their own, so a recycled pid is never signalled. */
  prune(): void {
    for (const pgid of [...this.#groups]) this.alive(pgid);
  }

  get size(): number {
    return this.#groups.size;
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is empty
  }
}
