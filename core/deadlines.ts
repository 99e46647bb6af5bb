/**
 * Call timeouts, one timer per duration instead of one per call.
 *
 * Calls with the same timeout reach their deadlines in the order they started, so each duration's
 * pending deadlines form a queue whose first entry is the next to expire. Starting and finishing a
 * call is then a push and a remove on a list (list.ts says why not a Set). A Node timer per call
 * cost far more on every call, most of it creating and tearing down Node's timer list for the
 * duration whenever calls run one at a time. The one timer wakes for the oldest pending deadline
 * only, and keeps the process alive exactly while a call is pending, as a timer per call did.
 */

// `performance` is the global, not node:perf_hooks' binding: importing that module costs every host start
// ~5 M instructions, the global's accessor ~5 ns a read (docs/plugins.md, "How a plugin is loaded").
import { List, type ListNode } from './list.ts';

/** The longest a timeout can be: Node's timers take at most 2^31 − 1 ms (about 24.8 days), and fire at once past it. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** A pending deadline; `cancel()` before it expires and its callback never runs. */
export interface Deadline {
  cancel(): void;
}

/** A pending deadline in its queue: one object per call, no closure. */
class Entry implements Deadline {
  /** `performance.now()` at which it expires. */
  readonly at: number;
  readonly expire: () => void;
  private readonly queue: Queue;
  /** Its place in the queue. */
  node: ListNode<Entry> | undefined;

  constructor(queue: Queue, at: number, expire: () => void) {
    this.queue = queue;
    this.at = at;
    this.expire = expire;
  }

  cancel(): void {
    this.queue.remove(this);
  }
}

/** Every deadline of one duration. */
class Queue {
  private readonly entries = new List<Entry>();
  private timer: NodeJS.Timeout | undefined;
  private readonly ms: number;

  constructor(ms: number) {
    this.ms = ms;
  }

  add(expire: () => void): Deadline {
    const entry = new Entry(this, performance.now() + this.ms, expire);
    entry.node = this.entries.push(entry);
    // A timer already armed is armed for an older deadline, so it wakes in time for this one.
    if (!this.timer) this.timer = setTimeout(this.sweep, this.ms);
    else if (this.entries.size === 1) this.timer.ref();
    return entry;
  }

  remove(entry: Entry): void {
    if (!entry.node) return;
    this.entries.remove(entry.node);
    entry.node = undefined;
    // Left armed: clearing it would cost what this class saves. Unref'd, it keeps nothing alive.
    if (this.entries.size === 0) this.timer?.unref();
  }

  private readonly sweep = (): void => {
    this.timer = undefined;
    const now = performance.now();
    for (let entry = this.entries.first(); entry && entry.at <= now; entry = this.entries.first()) {
      this.entries.remove(entry.node!);
      entry.node = undefined;
      try {
        entry.expire();
      } catch (error) {
        // Thrown where a timer of its own would have thrown it, without stalling the deadlines after it.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    // Re-armed for the oldest deadline left, whatever the expired calls added or cancelled meanwhile.
    clearTimeout(this.timer);
    const next = this.entries.first();
    this.timer = next && setTimeout(this.sweep, Math.max(1, Math.ceil(next.at - performance.now())));
  };
}

const queues = new Map<number, Queue>();

/** Runs `expire` in `ms` milliseconds unless the deadline is cancelled first. */
export function deadline(ms: number, expire: () => void): Deadline {
  // Config and the contract check keep timeouts in range; a timer past it would fire at once.
  if (!(Number.isInteger(ms) && ms >= 1 && ms <= MAX_TIMEOUT_MS))
    throw new RangeError(`a deadline takes 1 to ${MAX_TIMEOUT_MS} ms, got ${ms}`);
  let queue = queues.get(ms);
  if (!queue) {
    queue = new Queue(ms);
    queues.set(ms, queue);
  }
  return queue.add(expire);
}
