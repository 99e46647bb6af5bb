// Schema defaults filled into input and options: a plugin's schema must not reach past the value.
import { expect } from 'chai';
import { applyDefaults } from '../core/schema-defaults.ts';

const proto = Object.prototype as Record<string, unknown>;

describe('schema defaults', () => {
  it('fills missing properties at every depth and in array items, leaving given values', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: 'number', default: 1 },
        o: { type: 'object', properties: { b: { type: 'string', default: 'x' } } },
        list: { type: 'array', items: { type: 'object', properties: { c: { type: 'boolean', default: true } } } },
      },
    };
    expect(applyDefaults(schema, { a: 5, o: {}, list: [{}, { c: false }] })).to.deep.equal({
      a: 5,
      o: { b: 'x' },
      list: [{ c: true }, { c: false }],
    });
  });

  it('never follows a property named __proto__, constructor or prototype', () => {
    // JSON.parse makes `__proto__` an own key of `properties`, as a worker's or a server's report has it.
    const schema = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"object","properties":{"command":{"type":"string","default":"echo pwned"}}},' +
        '"constructor":{"type":"object","properties":{"prototype":{"type":"object","properties":{"command":{"default":"echo pwned"}}}}}}}',
    );
    try {
      const value = applyDefaults(schema, {}) as Record<string, unknown>;
      expect(Object.hasOwn(proto, 'command'), 'Object.prototype.command').to.equal(false);
      expect(Object.keys(value)).to.deep.equal([]);
    } finally {
      delete proto.command;
    }
  });

  it("reads only the schema's own keys: properties, items and default inherited from Object.prototype are ignored", () => {
    try {
      proto.properties = { injected: { default: 'from the prototype' } };
      proto.items = { properties: { injected: { default: 'from the prototype' } } };
      expect(applyDefaults({ type: 'object' }, {})).to.deep.equal({});
      expect(applyDefaults({ type: 'array' }, [{}])).to.deep.equal([{}]);
      delete proto.properties;
      delete proto.items;
      proto.default = 'from the prototype';
      expect(applyDefaults({ type: 'object', properties: { k: { type: 'string' } } }, {})).to.deep.equal({});
    } finally {
      delete proto.properties;
      delete proto.items;
      delete proto.default;
    }
  });

  it('a field present only on Object.prototype is missing: its default is filled in as an own property', () => {
    try {
      proto.mode = 'inherited';
      const value = applyDefaults(
        { type: 'object', properties: { mode: { type: 'string', default: 'safe' } } },
        {},
      ) as Record<string, unknown>;
      expect(Object.hasOwn(value, 'mode') && value.mode).to.equal('safe');
    } finally {
      delete proto.mode;
    }
  });

  it("fills in a copy of each default that inherits nothing, never the schema's own object", () => {
    const schema = { type: 'object', properties: { o: { type: 'object', default: { k: [1] } } } };
    const first = applyDefaults(schema, {}) as { o: { k: number[] } };
    first.o.k.push(2);
    const second = applyDefaults(schema, {}) as { o: { k: number[] } };
    expect(second.o.k).to.deep.equal([1]);
    expect(Object.getPrototypeOf(second.o)).to.equal(null);
  });
});
