// The list every call joins and leaves (pending deadlines, runs in flight): order, removal from
// anywhere, and a node removed twice or from another list changing nothing.
import { expect } from 'chai';
import { List } from '../core/list.ts';

describe('List', () => {
  it('keeps values in the order they were pushed, and removes any of them in place', () => {
    const list = new List<string>();
    const nodes = ['a', 'b', 'c', 'd', 'e'].map((v) => list.push(v));
    expect([...list]).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
    list.remove(nodes[2]!); // middle
    list.remove(nodes[0]!); // head
    list.remove(nodes[4]!); // tail
    expect([...list]).to.deep.equal(['b', 'd']);
    expect(list.size).to.equal(2);
    expect(list.first()).to.equal('b');
    list.push('f');
    expect([...list]).to.deep.equal(['b', 'd', 'f']);
  });

  it('empties and fills again, with first() undefined while empty', () => {
    const list = new List<number>();
    for (let round = 0; round < 3; round++) {
      const node = list.push(round);
      expect(list.first()).to.equal(round);
      list.remove(node);
      expect(list.size).to.equal(0);
      expect(list.first()).to.equal(undefined);
      expect([...list]).to.deep.equal([]);
    }
  });

  it('ignores a node removed twice, or removed through a list it is not in', () => {
    const one = new List<string>();
    const other = new List<string>();
    const a = one.push('a');
    one.push('b');
    const c = other.push('c');
    one.remove(a);
    one.remove(a);
    one.remove(c);
    expect([...one]).to.deep.equal(['b']);
    expect(one.size).to.equal(1);
    expect([...other]).to.deep.equal(['c']);
    expect(other.size).to.equal(1);
  });
});
