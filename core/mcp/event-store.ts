/**
 * What a Streamable HTTP session sent, kept so that a client whose SSE stream broke can reconnect
 * with `Last-Event-ID` and get what it missed (MCP resumability). In memory, one store per
 * session, and bounded in events and in size: past `max` events, or `maxChars` characters of JSON
 * (a tool's result or a plugin's log line can be large, and every session has its store), the
 * oldest are forgotten, and a client resuming from a forgotten event is told so (the SDK answers
 * 400) rather than handed a stream with a hole in it. The newest event is always kept.
 * The stores of one server also share an `EventBudget`: a session's own bound times every session
 * a server keeps is more memory than a host should give callers to fill.
 */
import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

interface StoredEvent {
  streamId: StreamId;
  message: JSONRPCMessage;
  chars: number;
  /** Its place in the order of every store of the budget. */
  seq: number;
}

/**
 * The characters of JSON the stores of one server hold together. Past `maxChars`, the oldest event
 * of any store goes, whoever's session it was: the one who fills it pushes out the oldest, not the
 * others' newest (each store keeps its own newest event).
 */
export class EventBudget {
  readonly maxChars: number;
  private chars = 0;
  private seq = 0;
  /** The stores holding events. A store leaves when its session ends (`end`). */
  private readonly stores = new Set<BoundedEventStore>();

  constructor(maxChars: number) {
    this.maxChars = maxChars;
  }

  get storedChars(): number {
    return this.chars;
  }

  /** `chars` more held by `store`; returns the event's place in the order. */
  take(store: BoundedEventStore, chars: number): number {
    this.stores.add(store);
    this.chars += chars;
    return ++this.seq;
  }

  give(store: BoundedEventStore, chars: number, empty: boolean): void {
    this.chars -= chars;
    if (empty) this.stores.delete(store);
  }

  /** Forgets the oldest events of all the stores until they fit, keeping each store's newest. */
  trim(): void {
    while (this.chars > this.maxChars) {
      let oldest: BoundedEventStore | undefined;
      let oldestSeq = Number.POSITIVE_INFINITY;
      for (const store of this.stores) {
        const seq = store.oldestSpare();
        if (seq < oldestSeq) {
          oldest = store;
          oldestSeq = seq;
        }
      }
      if (!oldest) return; // every store is down to its newest
      oldest.forgetOldest();
    }
  }
}

export class BoundedEventStore implements EventStore {
  /** Oldest first; a Map keeps insertion order, so eviction is its first key. */
  private readonly events = new Map<EventId, StoredEvent>();
  private next = 0;
  private chars = 0;
  private readonly max: number;
  private readonly maxChars: number;
  private readonly budget: EventBudget | undefined;
  private ended = false;

  constructor(max: number, maxChars = Number.POSITIVE_INFINITY, budget?: EventBudget) {
    this.max = max;
    this.maxChars = maxChars;
    this.budget = budget;
  }

  /** The characters of JSON the kept events hold. */
  get storedChars(): number {
    return this.chars;
  }

  get size(): number {
    return this.events.size;
  }

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const id = String(++this.next);
    if (this.ended) return id;
    const chars = JSON.stringify(message).length;
    const seq = this.budget ? this.budget.take(this, chars) : 0;
    this.events.set(id, { streamId, message, chars, seq });
    this.chars += chars;
    while (this.events.size > 1 && (this.events.size > this.max || this.chars > this.maxChars)) this.forgetOldest();
    this.budget?.trim();
    return id;
  }

  /** The budget's place of the oldest event this store could forget (not its newest), or Infinity. */
  oldestSpare(): number {
    if (this.events.size < 2) return Number.POSITIVE_INFINITY;
    return this.events.values().next().value!.seq;
  }

  forgetOldest(): void {
    const [oldest, event] = this.events.entries().next().value!;
    this.events.delete(oldest);
    this.chars -= event.chars;
    this.budget?.give(this, event.chars, this.events.size === 0);
  }

  /**
   * Forgets every event, and keeps none sent from now on: the session ended, and no client will
   * resume it (a call still finishing would otherwise hold its share of the budget for good).
   */
  end(): void {
    this.ended = true;
    this.budget?.give(this, this.chars, true);
    this.events.clear();
    this.chars = 0;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return this.events.get(eventId)?.streamId;
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const last = this.events.get(lastEventId);
    if (!last) return '';
    let after = false;
    for (const [id, event] of [...this.events]) {
      if (id === lastEventId) after = true;
      // The priming event (an empty message that only carries an id) is no message to replay.
      else if (after && event.streamId === last.streamId && 'jsonrpc' in event.message) await send(id, event.message);
    }
    return last.streamId;
  }
}
