// A report made in the host's thread is plain data as made: the loader no longer copies an inline
// plugin's report, so each field must already be what a JSON copy would have made of it.
import { expect } from 'chai';
import { describePlugin, describeTool } from '../core/plugin-report.ts';
import { plainData } from '../core/safe-json.ts';

const odd = [Number.NaN, Number.POSITIVE_INFINITY, () => 1, Symbol('s'), null, { a: [1, undefined] }, 'x', true, 3];

describe('plugin report', () => {
  it('makes every field of a plugin and of a tool what a JSON copy of the report makes of it', () => {
    const asCopied = (report: object, value: unknown) => {
      const copy = plainData(report) as Record<string, unknown>;
      for (const [key, field] of Object.entries(report))
        expect(field, `${key}: ${String(value)}`).to.deep.equal(copy[key]);
    };
    for (const value of odd) {
      asCopied(describePlugin({ name: value, version: value, description: value, tools: [] }), value);
      asCopied(describeTool({ name: value, description: value, timeoutMs: value, inputSchema: {} }), value);
    }
  });

  it('copies an object field, so the report shares nothing with the plugin, and inherits nothing', () => {
    const name = { first: 'a' };
    const report = describePlugin({ name, tools: [] });
    expect(report.name).to.deep.equal({ first: 'a' });
    expect(report.name).to.not.equal(name);
    expect(Object.getPrototypeOf(report.name)).to.equal(null);
  });

  it('throws for a value JSON cannot copy, as the copy did', () => {
    expect(() => describePlugin({ name: 1n, tools: [] })).to.throw(TypeError, /BigInt/);
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(() => describeTool({ name: 't', description: loop, inputSchema: {} })).to.throw();
  });
});
