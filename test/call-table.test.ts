// Calls in flight by id: a slot per id, and ids whose slot an older call still holds kept aside,
// so a call that runs long never loses its place and iteration stays in the order calls were sent.
import { expect } from 'chai';
import { CallTable } from '../core/call-table.ts';

describe('CallTable', () => {
  it('sets, gets and deletes calls by id, counting them', () => {
    const table = new CallTable<string>(8);
    for (let id = 1; id <= 5; id++) table.set(id, `call ${id}`);
    expect(table.size).to.equal(5);
    expect(table.get(3)).to.equal('call 3');
    expect(table.has(9)).to.equal(false);
    expect(table.delete(3)).to.equal(true);
    expect(table.delete(3)).to.equal(false);
    expect(table.get(3)).to.equal(undefined);
    expect(table.size).to.equal(4);
    table.set(4, 'call 4 again'); // the same id twice replaces, and is counted once
    expect(table.get(4)).to.equal('call 4 again');
    expect(table.size).to.equal(4);
  });

  it('keeps a call whose slot is held by an older one, and goes through them oldest first', () => {
    const table = new CallTable<string>(4);
    table.set(1, 'long'); // stays while many others come and go
    for (let id = 2; id <= 40; id++) {
      table.set(id, `call ${id}`);
      expect(table.get(id)).to.equal(`call ${id}`);
      if (id < 38) table.delete(id);
    }
    // 5, 9, 13 … share slot 1 with the long call: they were kept aside and deleted from there.
    expect(table.get(1)).to.equal('long');
    expect(table.entries()).to.deep.equal([
      [1, 'long'],
      [38, 'call 38'],
      [39, 'call 39'],
      [40, 'call 40'],
    ]);
    expect(table.size).to.equal(4);
    table.set(41, 'call 41'); // slot 1 again, still held
    table.set(42, 'call 42'); // slot 2, held by 38
    expect(table.values()).to.deep.equal(['long', 'call 38', 'call 39', 'call 40', 'call 41', 'call 42']);
    table.delete(1);
    table.set(45, 'call 45'); // slot 1 is free now
    expect([...table].map(([id]) => id)).to.deep.equal([38, 39, 40, 41, 42, 45]);
    for (const [id] of table) table.delete(id); // deleting while going through is fine
    expect(table.size).to.equal(0);
    expect(table.entries()).to.deep.equal([]);
  });

  it('replaces a call kept aside even once its slot has come free, and never counts it twice', () => {
    const table = new CallTable<string>(4);
    table.set(1, 'long');
    table.set(5, 'five'); // slot 1 is held: kept aside
    table.delete(1);
    table.set(5, 'five again');
    expect(table.entries()).to.deep.equal([[5, 'five again']]);
    expect(table.size).to.equal(1);
    table.delete(5);
    expect(table.get(5)).to.equal(undefined);
    expect(table.size).to.equal(0);
  });

  it('finds nothing for what is not a call id, and never throws on it (an isolate names calls in its messages)', () => {
    const table = new CallTable<string>(4);
    table.set(0, 'zero');
    table.set(1, 'one');
    for (const id of [
      1n,
      -1,
      -0.5,
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      '1',
      { id: 1 },
      [1],
      null,
      undefined,
      2 ** 53 + 1,
    ]) {
      expect(table.get(id), String(id)).to.equal(undefined);
      expect(table.has(id), String(id)).to.equal(false);
    }
    expect(table.delete(-1)).to.equal(false);
    expect(table.size).to.equal(2);
    expect(() => table.set(-1, 'x')).to.throw(RangeError, /non-negative integer/);
    expect(() => table.set(1.5, 'x')).to.throw(RangeError);
    expect(table.entries()).to.deep.equal([
      [0, 'zero'],
      [1, 'one'],
    ]);
  });

  it('takes only a power of two as its number of slots', () => {
    expect(() => new CallTable(12)).to.throw(RangeError, /power of two/);
  });
});
