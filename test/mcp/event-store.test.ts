// The event store behind resumable SSE streams: replays one stream's events after a given one, skips
// priming events, and forgets the oldest past its bound.
import { expect } from 'chai';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { BoundedEventStore, EventBudget } from '../../core/mcp/event-store.ts';

const note = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { n } });
/** Of one size for any one-digit `n`. */
const big = (n: number): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { n, data: 'x'.repeat(1000) },
});

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

  it('forgets the oldest past its size in characters too, and always keeps the newest event', async () => {
    const size = JSON.stringify(big(1)).length;
    const store = new BoundedEventStore(1000, size * 3);
    const ids = [];
    for (let n = 1; n <= 9; n++) ids.push(await store.storeEvent('a', big(n))); // one digit: equal sizes
    expect(store.size).to.equal(3);
    expect(store.storedChars).to.equal(size * 3);
    expect((await replay(store, ids[6]!)).sent).to.deep.equal([big(8), big(9)]);
    expect(await replay(store, ids[5]!)).to.deep.equal({ stream: '', sent: [] });

    const huge: JSONRPCMessage = {
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { data: 'y'.repeat(size * 10) },
    };
    await store.storeEvent('a', huge);
    expect(store.size).to.equal(1);
    expect(store.storedChars).to.equal(JSON.stringify(huge).length);
  });

  it('the stores of one server share a budget: past it the oldest event of any store goes, each keeping its newest', async () => {
    const size = JSON.stringify(big(1)).length;
    // Each store alone would keep 100 of them; together they may hold 4.
    const budget = new EventBudget(size * 4);
    const [a, b, c] = [1, 2, 3].map(() => new BoundedEventStore(1000, size * 100, budget));
    const first = await a!.storeEvent('s', big(1));
    await a!.storeEvent('s', big(2));
    await b!.storeEvent('s', big(3));
    await b!.storeEvent('s', big(4));
    expect(budget.storedChars).to.equal(size * 4);
    const fifth = await c!.storeEvent('s', big(5));
    // a's oldest went: the whole server's oldest.
    expect([a!.size, b!.size, c!.size]).to.deep.equal([1, 2, 1]);
    expect(await a!.getStreamIdForEventId(first)).to.equal(undefined);
    expect(budget.storedChars).to.equal(size * 4);
    for (let n = 6; n <= 9; n++) await c!.storeEvent('s', big(n));
    // Only c can give more: a and b keep their newest, a client resuming from it misses nothing.
    expect([a!.size, b!.size, c!.size]).to.deep.equal([1, 1, 2]);
    expect(await c!.getStreamIdForEventId(fifth)).to.equal(undefined);
    expect(budget.storedChars).to.equal(size * 4);

    // A store whose session ended gives its characters back, and keeps nothing sent after.
    b!.end();
    expect(b!.size).to.equal(0);
    expect(budget.storedChars).to.equal(size * 3);
    await b!.storeEvent('s', big(0));
    expect([b!.size, budget.storedChars]).to.deep.equal([0, size * 3]);
  });
});
