import { expect } from 'chai';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { checkPlugin } from '../core/check.ts';
import type { HostError } from '../core/errors.ts';
import { describePlugin, describeTool } from '../core/plugin-report.ts';
import { instantiatePlugin } from '../core/runners/plugin-instance.ts';
import { schemaProblems } from '../core/schema-errors.ts';
import { checkedLinearSchema, compileLinear } from '../core/schema-patterns.ts';
import { compileSchema, TOO_COSTLY_TO_EXPLAIN } from '../core/schema-validator.ts';
import { RECIPES } from './fixtures/hostile/schema-recipes.ts';

/** The load check's errors for a tool with this input schema: what a plugin author would see. */
function loadErrors(inputSchema: unknown) {
  const tool = { name: 't', description: 'T.', inputSchema, execute: () => '' };
  const exported = { name: 'p', version: '1.0.0', tools: [tool] };
  return checkPlugin('/p.ts', describePlugin(exported), [describeTool(tool)]).filter((v) => v.severity === 'error');
}

const COSTLY = [{ pointer: '', message: TOO_COSTLY_TO_EXPLAIN }];

describe('schema validator: errors on a budget', () => {
  it('lists the same problems as before for normal schemas', () => {
    const schema = Type.Object(
      {
        name: Type.String({ minLength: 2 }),
        mode: Type.Union([Type.Literal('fast'), Type.Literal('slow')]),
        tags: Type.Array(Type.String(), { uniqueItems: true }),
        nested: Type.Object({ n: Type.Integer({ minimum: 0 }) }),
      },
      { additionalProperties: false },
    );
    const value = { name: 'a', mode: 'fats', tags: ['x', 'x'], nested: { n: -1 }, extra: true };
    const validator = compileLinear(schema);
    expect(validator.Check(value)).to.equal(false);
    const before = schemaProblems(Compile(checkedLinearSchema(schema)).Errors(value), value);
    expect(validator.problems(value)).to.deep.equal(before);
    expect(before.length).to.be.greaterThan(3);
    expect(validator.problems({ ...value, name: 'ab', extra: undefined }).map((p) => p.pointer)).to.not.include(
      '/name',
    );
  });

  it('resolves $anchor refs by name: 200 anchors and 500 items are explained exactly', () => {
    // 500 items, not the 2,000 of the other recipes: well within the CPU backstop even on a loaded machine.
    const { schema, input } = RECIPES.anchors!(500);
    expect(loadErrors(schema)).to.deep.equal([]);
    const validator = compileLinear(schema);
    expect(validator.Check(input)).to.equal(false);
    expect(validator.problems(input)).to.deep.equal([{ pointer: '/bad', message: 'must be string' }]);
    expect(validator.Check({ ...input, bad: 's' })).to.equal(true);
    expect(validator.Check({ bad: 's', list: ['s', 2] })).to.equal(false);
  });

  for (const [name, items] of [
    ['nestedIds', 2000],
    ['dynamicRef', 2000],
    ['uniqueItems', 30_000],
    ['contains', 810_000],
  ] as const) {
    it(`${name}: passes the load check, and one invalid input gets one line instead of a stall`, () => {
      const { schema, input } = RECIPES[name]!(items);
      expect(loadErrors(schema)).to.deep.equal([]);
      const validator = compileLinear(schema);
      expect(validator.Check(input)).to.equal(false);
      expect(validator.errors(input)).to.equal(undefined);
      expect(validator.problems(input)).to.deep.equal(COSTLY);
    });
  }

  it('the same recipes, small, are still explained in full', () => {
    const validator = compileLinear(RECIPES.nestedIds!(3).schema);
    expect(validator.problems({ bad: 1, list: [{ q: 's' }, { q: 2 }] })).to.deep.equal([
      { pointer: '/bad', message: 'must be string' },
      { pointer: '/list/1/q', message: 'must be string' },
    ]);
    expect(compileLinear(RECIPES.uniqueItems!(3).schema).problems({ list: [1, 1] })).to.deep.equal([
      { pointer: '/list', message: 'must not have duplicate items' },
    ]);
  });

  it('a patternProperties value is explained on the budget of the schema it sits in', () => {
    const { schema } = RECIPES.nestedIds!(0);
    const around = { type: 'object', patternProperties: { '^v': schema } };
    const validator = compileLinear(around);
    const { input } = RECIPES.nestedIds!(2000);
    expect(validator.Check({ v1: input })).to.equal(false);
    expect(validator.problems({ v1: input })).to.deep.equal(COSTLY);
    expect(validator.problems({ v1: { bad: 1 } })).to.deep.equal([
      { pointer: '', message: '"v1" (a key matching "^v"): must be string' },
    ]);
  });

  it('explains a frozen schema (typebox types may be frozen) without tripping proxy invariants', () => {
    const schema = Object.freeze({
      type: 'object',
      properties: Object.freeze({ a: Object.freeze({ type: 'string' }) }),
      required: Object.freeze(['a']),
    });
    expect(compileSchema(schema as never).problems({ a: 1 })).to.deep.equal([
      { pointer: '/a', message: 'must be string' },
    ]);
  });

  it('plugin options: a costly options schema gets the one line, with the options error code', async () => {
    const { schema, input } = RECIPES.dynamicRef!(2000);
    const plugin = { name: 'p', version: '1.0.0', options: schema, tools: [] };
    const ctx = {
      source: 'p',
      options: input,
      workspace: '/tmp',
      log: { debug() {}, info() {}, warn() {}, error() {} },
      signal: new AbortController().signal,
    };
    const error = await instantiatePlugin(plugin, ctx as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as HostError).code).to.equal('RH_ERR_PLUGIN_OPTIONS');
    expect((error as Error).message).to.include(`options: ${TOO_COSTLY_TO_EXPLAIN}`);
    // A cheap one still names the field.
    const small = await instantiatePlugin(plugin, { ...ctx, options: { bad: 1, list: [] } } as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((small as Error).message).to.include('options/bad: must be string');
  });
});

describe('schema validator: format "regex"', () => {
  const validator = compileLinear({
    type: 'object',
    properties: { re: { type: 'string', format: 'regex', description: 'A regex.' } },
  });

  it('checks a regex in bounded time: 200,000 \\p{L} classes (1 MB) once held the host 45 s', () => {
    const input = { re: '\\p{L}'.repeat(200_000) };
    expect(validator.Check(input)).to.equal(false);
    // The budget's edge: 133 classes (665 characters, 3,325 more) and 10 characters is 4,000.
    expect(validator.Check({ re: `${'\\p{L}'.repeat(133)}abcdefghij` })).to.equal(true);
    expect(validator.Check({ re: `${'\\p{L}'.repeat(133)}abcdefghijk` })).to.equal(false);
    expect(validator.problems(input, {} as never).map((p) => p.message)).to.deep.equal([
      'is 1,000,000 characters long: too long to be checked as a regular expression (format "regex") in bounded time (at most 4,000 characters, each \\p{…} or \\P{…} counting 25 more); send a shorter value',
    ]);
  });

  it('still takes a long honest regex and refuses an invalid one', () => {
    const honest = `^(?:${Array.from({ length: 100 }, (_, i) => `word${i}`).join('|')})\\p{L}*$`;
    expect(validator.Check({ re: honest })).to.equal(true);
    expect(validator.Check({ re: '\\p{L}'.repeat(100) })).to.equal(true);
    expect(validator.Check({ re: '(' })).to.equal(false);
  });
});
