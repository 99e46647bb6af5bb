// The event store behind resumable SSE streams: replays one stream's events after a given one, skips
// priming events, and forgets the oldest past its bound.
import { expect } from 'chai';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { BoundedEventStore } from '../../core/mcp/event-store.ts';

const note = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { n } });

async function replay(store: BoundedEventStore, after: string): Promise<{ stream: string; sent: JSONRPCMessage[] }> {
  const sent: JSONRPCMessage[] = [];
  const stream = await store.replayEventsAfter(after, { send: async (_id, message) => void sent.push(message) });
  return { stream, sent };
}

describe('BoundedEventStore', () => {
  it('replays the events of the same stream after the given one, without priming events', async () => {
    const store = new BoundedEventStore(100);
    const primed = await store.storeEvent('a', {} as JSONRPCMessage);
    await store.storeEvent('a', note(1));
    await store.storeEvent('b', note(2));
    await store.storeEvent('a', note(3));
    expect(await store.getStreamIdForEventId(primed)).to.equal('a');
    expect(await replay(store, primed)).to.deep.equal({ stream: 'a', sent: [note(1), note(3)] });
  });

  it('keeps at most its bound, forgetting the oldest; a forgotten or unknown id replays nothing', async () => {
    const store = new BoundedEventStore(3);
    const ids = [];
    for (let n = 1; n <= 5; n++) ids.push(await store.storeEvent('a', note(n)));
    expect(store.size).to.equal(3);
    expect(await store.getStreamIdForEventId(ids[0]!)).to.equal(undefined);
    expect(await replay(store, ids[0]!)).to.deep.equal({ stream: '', sent: [] });
    expect(await replay(store, 'nonsense')).to.deep.equal({ stream: '', sent: [] });
    expect((await replay(store, ids[2]!)).sent).to.deep.equal([note(4), note(5)]);
  });
});
