/**
 * Calls in flight by id, for ids handed out in sequence (a runner's calls to its isolates, an
 * isolate's calls from its host). Each call is set on its way in and deleted on its way out: a
 * long-lived `Map` does that badly (list.ts says why: ~0.6 µs a call once the Map is old). Here an
 * id has a slot in an array, `id` modulo its length; the few ids whose slot is still held by an
 * older call (one that ran while as many others came and went) go to a Map made only while needed.
 * Ids are non-negative safe integers; `get` and `has` take anything (an isolate's messages name the
 * call they are about, and the plugin's code can post any value there) and find nothing for the rest.
 */
export class CallTable<T> implements Iterable<[number, T]> {
  /** The id in each slot; NaN, which equals no id, when the slot is free. */
  private readonly ids: Float64Array;
  private readonly calls: (T | undefined)[];
  private readonly mask: number;
  /** Ids whose slot was taken when they came; `undefined` while there are none. */
  private overflow: Map<number, T> | undefined;
  private count = 0;

  /** `slots`: a power of two, more than the calls usually in flight at once. */
  constructor(slots = 64) {
    if (!Number.isInteger(Math.log2(slots))) throw new RangeError(`slots must be a power of two, got ${slots}`);
    this.ids = new Float64Array(slots).fill(Number.NaN);
    this.calls = new Array<T | undefined>(slots).fill(undefined);
    this.mask = slots - 1;
  }

  get size(): number {
    return this.count;
  }

  get(id: unknown): T | undefined {
    if (typeof id !== 'number') return undefined; // `id & mask` would throw on a BigInt
    const slot = id & this.mask;
    return this.ids[slot] === id ? this.calls[slot] : this.overflow?.get(id);
  }

  has(id: unknown): boolean {
    return this.get(id) !== undefined;
  }

  /** Sets the call of `id` (`value` is never `undefined`); the same id again replaces it. */
  set(id: number, value: T): void {
    if (!(Number.isSafeInteger(id) && id >= 0)) throw new RangeError(`a call id is a non-negative integer, got ${id}`);
    const slot = id & this.mask;
    if (this.ids[slot] === id) {
      this.calls[slot] = value;
      return;
    }
    if (this.overflow?.has(id)) {
      this.overflow.set(id, value); // kept aside when it came: its slot may have come free since
      return;
    }
    if (Number.isNaN(this.ids[slot])) {
      this.ids[slot] = id;
      this.calls[slot] = value;
    } else {
      this.overflow ??= new Map();
      this.overflow.set(id, value);
    }
    this.count++;
  }

  /** Whether there was a call of `id` to delete. */
  delete(id: number): boolean {
    if (typeof id !== 'number') return false;
    const slot = id & this.mask;
    if (this.ids[slot] === id) {
      this.ids[slot] = Number.NaN;
      this.calls[slot] = undefined;
    } else if (this.overflow?.delete(id)) {
      if (this.overflow.size === 0) this.overflow = undefined;
    } else {
      return false;
    }
    this.count--;
    return true;
  }

  /** The calls, oldest id first (the order they were sent in). */
  values(): T[] {
    return this.entries().map(([, value]) => value);
  }

  /**
   * `[id, call]`, oldest id first. A copy, unlike a Map's iterator: a call deleted while the copy is
   * gone through is still in it, and one set meanwhile is not.
   */
  entries(): [number, T][] {
    const entries: [number, T][] = [];
    for (let slot = 0; slot < this.ids.length; slot++) {
      if (!Number.isNaN(this.ids[slot])) entries.push([this.ids[slot]!, this.calls[slot] as T]);
    }
    if (this.overflow) entries.push(...this.overflow);
    return entries.sort(([a], [b]) => a - b);
  }

  [Symbol.iterator](): Iterator<[number, T]> {
    return this.entries()[Symbol.iterator]();
  }
}
