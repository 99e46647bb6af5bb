import { expect } from 'chai';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { HostConfigSchema } from '../core/config-schema.ts';
import { schemaProblems } from '../core/schema-errors.ts';

const problems = (schema: object, value: unknown) => schemaProblems(Compile(schema as never).Errors(value), value);

describe('schema problems', () => {
  it('names unknown keys once, with the key escaped in the pointer', () => {
    const schema = Type.Object({ a: Type.String() }, { additionalProperties: false });
    expect(problems(schema, { a: 'x', 'b/c': 1, file: 2 })).to.deep.equal([
      { pointer: '/b~1c', message: 'unknown key' },
      { pointer: '/file', message: 'unknown key' },
    ]);
  });

  it('lists the allowed values of an enum, a union of literals and a constant', () => {
    const schema = Type.Object({
      units: Type.Union([Type.Literal('si'), Type.Literal('us')]),
      mode: Type.Enum(['fast', 'exact']),
      kind: Type.Literal('city'),
    });
    expect(problems(schema, { units: 'metric', mode: 'slow', kind: 'town' })).to.deep.equal([
      { pointer: '/units', message: 'must be one of "si", "us"' },
      { pointer: '/mode', message: 'must be one of "fast", "exact"' },
      { pointer: '/kind', message: 'must be "city"' },
    ]);
  });

  it('suggests the allowed value a misspelt one most likely meant, and none when nothing is near', () => {
    const schema = Type.Object({
      isolation: Type.Union([Type.Literal('inline'), Type.Literal('worker'), Type.Literal('process')]),
      level: Type.Enum(['error', 'warn', 'info', 'debug']),
    });
    expect(problems(schema, { isolation: 'proces', level: 'verbose' })).to.deep.equal([
      { pointer: '/isolation', message: 'must be one of "inline", "worker", "process" (did you mean "process"?)' },
      { pointer: '/level', message: 'must be one of "error", "warn", "info", "debug"' },
    ]);
  });

  it('suggests the nearest declared key for an unknown one when given the schema', () => {
    const schema = Type.Object({ city: Type.String(), units: Type.String() }, { additionalProperties: false });
    const value = { city: 'Oslo', units: 'si', unist: 'x', q: 1 };
    expect(schemaProblems(Compile(schema).Errors(value), value, schema)).to.deep.equal([
      { pointer: '/unist', message: 'unknown key (did you mean "units"?)' },
      { pointer: '/q', message: 'unknown key' },
    ]);
  });

  it('suggests within a budget of comparisons per input: past it, and for a key no typo makes, the key is only named', () => {
    // Each suggestion compares the key with each declared one, letter by letter: 2,000 near keys
    // against 400 declared ones, or one 100,000-character key, held the host's thread for seconds.
    const declared = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`field_name_${i}`, Type.String()]));
    const schema = Type.Object(declared);
    const value = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`field_nme_${i}`, 1]));
    const found = schemaProblems(Compile(schema).Errors(value), value, schema);
    const at = (pointer: string) => found.find((p) => p.pointer === pointer)?.message;
    // An open object missing its required keys: each sent key is compared with each missing one.
    expect(at('/field_nme_0')).to.equal('`field_nme_0` is not a known key; did you mean `field_name_0`?');
    expect(at('/field_nme_1999')).to.equal(undefined);
    const closed = Type.Object({ field_name: Type.Optional(Type.String()) }, { additionalProperties: false });
    const long = { [`field_name${'x'.repeat(100_000)}`]: 1 };
    expect(schemaProblems(Compile(closed).Errors(long), long, closed).map((p) => p.message)).to.deep.equal([
      'unknown key',
    ]);
  });

  it('names a misspelt required key of an open object beside the missing one, and leaves unrelated keys alone', () => {
    const schema = Type.Object({ path: Type.String(), limit: Type.Optional(Type.Integer()) });
    const value = { pathh: '/tmp', extra: 1, limit: 2 };
    expect(schemaProblems(Compile(schema).Errors(value), value, schema)).to.deep.equal([
      { pointer: '', message: 'must have required properties path' },
      { pointer: '/pathh', message: '`pathh` is not a known key; did you mean `path`?' },
    ]);
    // Without the schema nothing is guessed; a closed object says it once, as an unknown key.
    expect(problems(schema, value)).to.deep.equal([{ pointer: '', message: 'must have required properties path' }]);
    const closed = Type.Object({ path: Type.String() }, { additionalProperties: false });
    const typo = { pathh: '/tmp' };
    expect(schemaProblems(Compile(closed).Errors(typo), typo, closed)).to.deep.equal([
      { pointer: '', message: 'must have required properties path' },
      { pointer: '/pathh', message: 'unknown key (did you mean "path"?)' },
    ]);
  });

  it('never comes back empty: a value with no place in the schema is named', () => {
    const found = problems(Type.Tuple([Type.String()]), ['a', 'b']);
    expect(found.length).to.be.greaterThan(0);
    expect(found.map((p) => p.pointer)).to.include('/1');
  });

  it("prefers what a union branch said to the union's catch-all", () => {
    const schema = Type.Object({
      v: Type.Union([Type.Object({ n: Type.Integer() }), Type.Object({ s: Type.String() })]),
    });
    const found = problems(schema, { v: { n: 'x' } });
    expect(found).to.deep.include({ pointer: '/v/n', message: 'must be integer' });
    expect(found.map((p) => p.message)).to.not.include('must match a schema in anyOf');
  });

  it('speaks only for the union branches whose type the value has', () => {
    const entry = Type.Union([
      Type.String(),
      Type.Object({ module: Type.String(), timeoutMs: Type.Optional(Type.Integer()) }),
    ]);
    const schema = Type.Object({ list: Type.Union([Type.Array(entry), Type.Literal(false)]) });
    // An object entry with a bad field: not "must be string", not "must be false", just the field.
    expect(problems(schema, { list: [{ module: 'm', timeoutMs: '5s' }] })).to.deep.equal([
      { pointer: '/list/0/timeoutMs', message: 'must be integer' },
    ]);
    const named = Type.Union([Type.Enum(['fs', 'shell']), Type.Object({ name: Type.String(), n: Type.Integer() })]);
    expect(problems(Type.Object({ b: named }), { b: { name: 'fs', n: 'x' } })).to.deep.equal([
      { pointer: '/b/n', message: 'must be integer' },
    ]);
  });

  it('a near miss of a name in a union of a name list and an object is one line: the name branch was meant', () => {
    for (const [raw, line] of [
      [
        { builtins: ['fss'] },
        { pointer: '/builtins/0', message: 'must be one of "fs", "shell", "http" (did you mean "fs"?)' },
      ],
      [
        { builtins: ['fs', 'shel'] },
        { pointer: '/builtins/1', message: 'must be one of "fs", "shell", "http" (did you mean "shell"?)' },
      ],
    ] as const) {
      expect(schemaProblems(Value.Errors(HostConfigSchema, raw), raw, HostConfigSchema)).to.deep.equal([line]);
    }
    // Nothing near: the object form is still said, so no form goes unsaid.
    const far = { builtins: ['zzzz'] };
    expect(schemaProblems(Value.Errors(HostConfigSchema, far), far).map((p) => p.message)).to.include('must be object');
  });

  it('keeps every branch when the value fits none, or only misses a literal, so no form goes unsaid', () => {
    const schema = Type.Object({ list: Type.Union([Type.Array(Type.String()), Type.Literal(false)]) });
    expect(problems(schema, { list: 5 }).map((p) => p.message)).to.include.members(['must be array', 'must be false']);
    // A literal's own type error restates it.
    expect(problems(schema, { list: 5 }).map((p) => p.message)).to.not.include('must be boolean');
    expect(problems(schema, { list: true }).map((p) => p.message)).to.include.members([
      'must be array',
      'must be false',
    ]);
  });
});
