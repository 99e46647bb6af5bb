import { expect } from 'chai';
import { exponentialRecursion } from '../core/schema-recursion.ts';

const array = (items: unknown) => ({ type: 'array', items });

describe('schema recursion that doubles per level', () => {
  it('finds two paths back to one schema for the same value: anyOf, allOf, items with contains, $recursiveRef, anchors', () => {
    const n = { anyOf: [array({ $ref: '#/$defs/n' }), array({ $ref: '#/$defs/n' }), { type: 'string' }] };
    expect(exponentialRecursion({ type: 'object', properties: { a: { $ref: '#/$defs/n' } }, $defs: { n } })).to.equal(
      '/$defs/n/anyOf/1/items',
    );
    expect(exponentialRecursion(array({ allOf: [{ $ref: '#' }, { $ref: '#' }] }))).to.equal('/items');
    expect(exponentialRecursion({ type: 'array', items: { $ref: '#' }, contains: { $ref: '#' } })).to.equal('/items');
    expect(
      exponentialRecursion({
        $recursiveAnchor: true,
        ...array({ oneOf: [{ $recursiveRef: '#' }, { $recursiveRef: '#' }] }),
      }),
    ).to.equal('/items');
    expect(
      exponentialRecursion({
        ...array({ anyOf: [{ $ref: '#x' }, { $ref: '#x' }] }),
        $defs: { x: { $anchor: 'x', $ref: '#' } },
      }),
    ).to.equal('/items');
    // Through properties: `a` twice, once named and once by additionalProperties.
    expect(
      exponentialRecursion({ type: 'object', properties: { a: { $ref: '#' } }, additionalProperties: { $ref: '#' } }),
    ).to.equal(undefined);
    expect(
      exponentialRecursion({
        type: 'object',
        properties: { a: { $ref: '#' } },
        patternProperties: { '^a': { $ref: '#' } },
        additionalProperties: false,
      }),
    ).to.equal('/properties/a');
  });

  it('passes recursion that grows with the value only: trees, linked lists, any JSON', () => {
    expect(
      exponentialRecursion({
        type: 'object',
        properties: { left: { $ref: '#' }, right: { $ref: '#' }, kids: array({ $ref: '#' }) },
      }),
    ).to.equal(undefined);
    const node = { type: 'object', properties: { next: { anyOf: [{ $ref: '#/$defs/node' }, { type: 'null' }] } } };
    expect(
      exponentialRecursion({ type: 'object', properties: { head: { $ref: '#/$defs/node' } }, $defs: { node } }),
    ).to.equal(undefined);
    const json = {
      anyOf: [
        { type: 'string' },
        array({ $ref: '#/$defs/v' }),
        { type: 'object', additionalProperties: { $ref: '#/$defs/v' } },
      ],
    };
    expect(
      exponentialRecursion({ type: 'object', additionalProperties: { $ref: '#/$defs/v' }, $defs: { v: json } }),
    ).to.equal(undefined);
    // Two paths that never come back: no cycle, no doubling.
    expect(
      exponentialRecursion({
        anyOf: [{ $ref: '#/$defs/a' }, { $ref: '#/$defs/a' }],
        $defs: { a: array({ type: 'string' }) },
      }),
    ).to.equal(undefined);
  });
});
