/**
 * What a Streamable HTTP session sent, kept so that a client whose SSE stream broke can reconnect
 * with `Last-Event-ID` and get what it missed (MCP resumability). In memory, one store per
 * session, and bounded: past `max` events the oldest are forgotten, and a client resuming from a
 * forgotten event is told so (the SDK answers 400) rather than handed a stream with a hole in it.
 */
import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export class BoundedEventStore implements EventStore {
  /** Oldest first; a Map keeps insertion order, so eviction is its first key. */
  private readonly events = new Map<EventId, { streamId: StreamId; message: JSONRPCMessage }>();
  private next = 0;
  private readonly max: number;

  constructor(max: number) {
    this.max = max;
  }

  get size(): number {
    return this.events.size;
  }

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const id = String(++this.next);
    this.events.set(id, { streamId, message });
    if (this.events.size > this.max) this.events.delete(this.events.keys().next().value!);
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
