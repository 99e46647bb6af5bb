// JSON pointers: escaping, and reading a value by own properties only.
import { expect } from 'chai';
import { escapeSegment, segments, valueAt } from '../core/json-pointer.ts';

describe('JSON pointers', () => {
  it('escape and split segments (RFC 6901)', () => {
    expect(escapeSegment('a/b~c')).to.equal('a~1b~0c');
    expect(segments('/a~1b~0c/0')).to.deep.equal(['a/b~c', '0']);
    expect(segments('')).to.deep.equal([]);
  });

  it('valueAt follows own properties of objects and arrays, never a prototype or a string', () => {
    const input = { headers: { host: 'h' }, paths: ['p'], text: 'abc' };
    expect(valueAt(input, ['headers', 'host'])).to.equal('h');
    expect(valueAt(input, ['paths', '0'])).to.equal('p');
    expect(valueAt(input, ['text', 'length'])).to.equal(undefined);
    expect(valueAt(input, ['paths', 'length'])).to.equal(1);
    const proto = Object.prototype as Record<string, unknown>;
    try {
      proto.command = 'echo pwned';
      expect(valueAt(input, ['command'])).to.equal(undefined);
      expect(valueAt(input, ['headers', 'command'])).to.equal(undefined);
      expect(valueAt(input, ['headers', 'toString'])).to.equal(undefined);
    } finally {
      delete proto.command;
    }
  });
});
