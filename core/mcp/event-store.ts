/**
 * What a Streamable HTTP session sent, kept so that a client whose SSE stream broke can reconnect
 * with `Last-Event-ID` and get what it missed (MCP resumability). In memory, one store per
 * session, and bounded in events and in size: past `max` events, or `maxChars` characters of JSON
 * (a tool's result or a plugin's log line can be large, and every session has its store), the
 * oldest are forgotten, and a client resuming from a forgotten event is told so (the SDK answers
 * 400) rather than handed a stream with a hole in it. The newest event is always kept.
 */
import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export class BoundedEventStore implements EventStore {
  /** Oldest first; a Map keeps insertion order, so eviction is its first key. */
  private readonly events = new Map<EventId, { streamId: StreamId; message: JSONRPCMessage; chars: number }>();
  private next = 0;
  private chars = 0;
  private readonly max: number;
  private readonly maxChars: number;

  constructor(max: number, maxChars = Number.POSITIVE_INFINITY) {
    this.max = max;
    this.maxChars = maxChars;
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
    const chars = JSON.stringify(message).length;
    this.events.set(id, { streamId, message, chars });
    this.chars += chars;
    while (this.events.size > 1 && (this.events.size > this.max || this.chars > this.maxChars)) {
      const [oldest, event] = this.events.entries().next().value!;
      this.events.delete(oldest);
      this.chars -= event.chars;
    }
    return id;
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
