import { expect } from 'chai';
import { compileLinear } from '../core/schema-patterns.ts';
import { exponentialRecursion, overApplied, schemasMet, unfollowedReferences } from '../core/schema-recursion.ts';

const array = (items: unknown) => ({ type: 'array', items });
/** Any JSON value: recursion once per value, through an anyOf. */
const json = {
  anyOf: [
    { type: 'string' },
    array({ $ref: '#/$defs/v' }),
    { type: 'object', additionalProperties: { $ref: '#/$defs/v' } },
  ],
};

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
    // Named and matching a pattern. A `patternProperties` value is compiled as a root of its own
    // with the root's $defs (schema-patterns.ts): it reaches back through a definition.
    const named = {
      type: 'object',
      properties: { a: { $ref: '#/$defs/n' } },
      patternProperties: { '^a': { $ref: '#/$defs/n' } },
      additionalProperties: false,
    };
    expect(exponentialRecursion({ $ref: '#/$defs/n', $defs: { n: named } })).to.equal('/$defs/n/properties/a');
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

describe('schemas applied to one value too many times', () => {
  /** The check's own bound (MAX_SCHEMA_NODES): as many schemas applied as the biggest schema allowed holds. */
  const over = (schema: unknown) => overApplied(schema, 50_000);
  /** `levels` definitions, each applying the next twice to the same value: 2^levels checks of one string. */
  const fan = (levels: number, keyword = 'allOf') => {
    const $defs: Record<string, unknown> = { [`d${levels}`]: { type: 'string' } };
    for (let i = 0; i < levels; i++)
      $defs[`d${i}`] = { [keyword]: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    return { type: 'object', properties: { a: { $ref: '#/$defs/d0' } }, $defs };
  };

  it('finds references that fan out without recursing: allOf, anyOf, oneOf, and across levels of the value', () => {
    for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
      const found = over(fan(30, keyword));
      expect(found?.loop, keyword).to.equal(false);
      expect(found?.pointer, keyword).to.match(/^\/\$defs\/d\d+$/);
    }
    // Each level of the value applies the next level's schema twice: 2^30 checks of a 30-deep value.
    const $defs: Record<string, unknown> = { d30: { type: 'string' } };
    for (let i = 0; i < 30; i++)
      $defs[`d${i}`] = {
        type: 'object',
        properties: { x: { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] } },
      };
    expect(over({ $ref: '#/$defs/d0', $defs })?.pointer).to.match(/^\/\$defs\/d\d+\//);
  });

  it('finds a reference back to a schema applied to the same value (a loop no value ends)', () => {
    const loop = {
      type: 'object',
      properties: { a: { $ref: '#/$defs/x' } },
      $defs: { x: { allOf: [{ $ref: '#/$defs/x' }] } },
    };
    expect(over(loop)).to.deep.equal({ pointer: '/$defs/x/allOf/0', loop: true });
    expect(over({ anyOf: [{ type: 'string' }, { $ref: '#' }] })).to.deep.equal({ pointer: '/anyOf/1', loop: true });
    expect(
      over({ $defs: { a: { not: { $ref: '#/$defs/b' } }, b: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' })?.loop,
    ).to.equal(true);
  });

  it('passes reuse that grows with the value: one definition under many properties, trees, any JSON', () => {
    expect(over(fan(10))).to.equal(undefined);
    const properties = Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [`p${i}`, { $ref: '#/$defs/address' }]),
    );
    const address = { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } };
    expect(over({ type: 'object', properties, $defs: { address } })).to.equal(undefined);
    expect(
      over({ type: 'object', properties: { left: { $ref: '#' }, right: { $ref: '#' }, kids: array({ $ref: '#' }) } }),
    ).to.equal(undefined);
    expect(over({ $ref: '#/$defs/v', $defs: { v: json } })).to.equal(undefined);
    // Data the check never applies (`examples`, `default`) costs nothing, however often its schema is referred to.
    const d = { type: 'object', examples: Array.from({ length: 3_000 }, (_, n) => ({ n })), properties: { n: {} } };
    const p = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`p${i}`, { $ref: '#/$defs/d' }]));
    expect(over({ type: 'object', properties: p, $defs: { d } })).to.equal(undefined);
  });
});

describe('references followed where typebox resolves them', () => {
  /** Loops the check once missed (it resolved `$ref`s against the root alone): each overflowed the stack on every input. */
  const missed: Record<string, [schema: Record<string, unknown>, pointer: string]> = {
    'a $ref resolved against a nested $id': [
      {
        $id: 'http://schemas.test/root',
        type: 'object',
        allOf: [{ $ref: 'sub' }],
        $defs: { sub: { $id: 'http://schemas.test/sub', allOf: [{ $ref: 'root' }] } },
      },
      '/allOf/0',
    ],
    'relative $ids and relative $refs between sibling resources': [
      {
        $id: 'http://schemas.test/a/root.json',
        type: 'object',
        properties: { p: { $ref: 'x.json' } },
        $defs: { x: { $id: 'x.json', not: { $ref: 'y.json' } }, y: { $id: 'y.json', allOf: [{ $ref: 'x.json' }] } },
      },
      '/$defs/x/not',
    ],
    'a pointer into a nested resource, from inside it': [
      {
        type: 'object',
        properties: {
          p: { $id: 'http://schemas.test/p', $defs: { a: { allOf: [{ $ref: '#' }] } }, $ref: '#/$defs/a' },
        },
      },
      '/properties/p/$defs/a/allOf/0',
    ],
    'a target inside default, which typebox resolves into as into any schema': [
      { type: 'object', default: { allOf: [{ $ref: '#' }] }, allOf: [{ $ref: '#/default' }] },
      '/default/allOf/0',
    ],
    'a target inside examples': [
      {
        type: 'object',
        examples: [{ anyOf: [{ $ref: '#/examples/0' }] }],
        properties: { p: { $ref: '#/examples/0' } },
      },
      '/examples/0/anyOf/0',
    ],
    'a patternProperties value, compiled as a root of its own: its "#" is itself': [
      { type: 'object', patternProperties: { '^a': { allOf: [{ $ref: '#' }] } } },
      '/patternProperties/^a/allOf/0',
    ],
    'dependentSchemas written as an array, which typebox walks as a map (key "0")': [
      { type: 'object', dependentSchemas: [{ allOf: [{ $ref: '#' }] }] },
      '/dependentSchemas/0/allOf/0',
    ],
    'dependencies written as an array': [
      { type: 'object', dependencies: [{ allOf: [{ $ref: '#' }] }] },
      '/dependencies/0/allOf/0',
    ],
    'the additionalProperties beside patternProperties, compiled the same way': [
      { type: 'object', patternProperties: { '^a': { type: 'string' } }, additionalProperties: { not: { $ref: '#' } } },
      '/additionalProperties/not',
    ],
  };
  for (const [what, [schema, pointer]] of Object.entries(missed))
    it(`finds the loop through ${what}`, () => {
      expect(() => compileLinear(schema).Check({ p: 1, a: 1, b: 1, 0: 1 }), 'the loop is real').to.throw(RangeError);
      expect(overApplied(schema, 50_000)).to.deep.equal({ pointer, loop: true });
    });

  it('finds loops through an $anchor, a $dynamicRef, and percent- and ~-encoded pointers', () => {
    const loops = [
      {
        type: 'object',
        properties: { p: { $ref: 'http://schemas.test/r#x' } },
        $defs: { r: { $id: 'http://schemas.test/r', $defs: { x: { $anchor: 'x', allOf: [{ $ref: '#x' }] } } } },
      },
      {
        $id: 'http://schemas.test/d',
        type: 'object',
        properties: { p: { $ref: '#/$defs/n' } },
        $defs: { n: { $dynamicAnchor: 'n', anyOf: [{ $dynamicRef: '#n' }] } },
      },
      {
        type: 'object',
        properties: { p: { $ref: '#/$defs/a%20b' } },
        $defs: { 'a b': { allOf: [{ $ref: '#/$defs/a%20b' }] } },
      },
      {
        type: 'object',
        properties: { p: { $ref: '#/$defs/a~1b' } },
        $defs: { 'a/b': { allOf: [{ $ref: '#/$defs/a~1b' }] } },
      },
    ];
    for (const schema of loops) expect(overApplied(schema, 50_000)?.loop, JSON.stringify(schema)).to.equal(true);
  });

  it('refuses a chain of bases that never ends, quickly: a relative $id reached again one directory deeper each time', () => {
    const schema = {
      $id: 'http://schemas.test/a/root.json',
      type: 'object',
      properties: { p: { $ref: 'b/sub.json' } },
      $defs: { s: { $id: 'b/sub.json', allOf: [{ $ref: '../root.json#/$defs/s' }] } },
    };
    expect(unfollowedReferences(schema)).to.equal('/$defs/s');
  });

  it('follows resources that refer to each other in any order without a state per order (a bundled schema)', () => {
    const $defs: Record<string, unknown> = {};
    for (let i = 0; i < 10; i++)
      $defs[`r${i}`] = {
        $id: `http://schemas.test/r${i}`,
        $dynamicAnchor: 'a',
        type: 'object',
        properties: Object.fromEntries(
          Array.from({ length: 10 }, (_, j) => [`to${j}`, { $ref: `http://schemas.test/r${j}` }]),
        ),
      };
    const bundle = {
      $id: 'http://schemas.test/root',
      type: 'object',
      properties: { p: { $ref: 'http://schemas.test/r0' } },
      $defs,
    };
    expect(unfollowedReferences(bundle)).to.equal(undefined);
    expect(exponentialRecursion(bundle)).to.equal(undefined);
  });

  it('passes what resolves to a value below: nested resources, relative refs, anchors in two resources', () => {
    const tree = {
      $id: 'http://schemas.test/tree',
      type: 'object',
      properties: { kids: { type: 'array', items: { $ref: 'node' } } },
      $defs: {
        node: { $id: 'node', type: 'object', properties: { next: { $ref: '#' }, up: { $ref: 'tree' } } },
        // The same anchor name in two resources: each `#x` means its own resource's.
        a: { $id: 'http://schemas.test/a', $anchor: 'x', type: 'array', items: { $ref: '#x' } },
        b: { $id: 'http://schemas.test/b', $anchor: 'x', type: 'array', items: { $ref: '#x' } },
      },
    };
    expect(overApplied(tree, 50_000)).to.equal(undefined);
    expect(exponentialRecursion(tree)).to.equal(undefined);
    expect(unfollowedReferences(tree)).to.equal(undefined);
    expect(compileLinear(tree).Check({ kids: [{ next: { next: {} }, up: { kids: [] } }] })).to.equal(true);
  });
});

describe('schemas one value may meet (what checking each value of an input may cost)', () => {
  it('is the size of a schema without references, enum entries included', () => {
    expect(schemasMet({ type: 'object', properties: { a: { type: 'string' } } }, 1_000_000)).to.equal(3);
    expect(schemasMet({ enum: ['a', 'b', 'c'] }, 1_000_000)).to.equal(5); // the schema, the array, its entries
  });

  it('counts through references: each an allOf of two references to the next doubles it, up to the limit', () => {
    const fan = (levels: number) => {
      const $defs: Record<string, unknown> = { [`d${levels}`]: { type: 'string' } };
      for (let i = 0; i < levels; i++)
        $defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
      return { $ref: '#/$defs/d0', $defs };
    };
    const ten = schemasMet(fan(10), 1_000_000);
    expect(ten).to.be.greaterThan(2 ** 11);
    expect(schemasMet(fan(11), 1_000_000)).to.be.greaterThan(2 * ten - 100);
    expect(schemasMet(fan(30), 100_000)).to.be.at.most(200_000);
  });
});
