// Property of the contract check (core/check.ts): it no longer compiles a schema at load (the
// registry does, at the tool's first call), so whatever typebox's compiler throws on, the check must
// refuse by itself. Random schemas, biased to what makes the compiler throw: regexes that do not
// parse, references whose fragment does not decode, keywords holding the wrong kind of value.
import { expect } from 'chai';
import fc from 'fast-check';
import { checkPlugin } from '../../core/check.ts';
import { describePlugin, describeTool } from '../../core/plugin-report.ts';
import { compileLinear } from '../../core/schema-patterns.ts';
import { RUNS } from './json.ts';

const KEYWORDS = [
  'type',
  'properties',
  'required',
  'items',
  'prefixItems',
  'additionalProperties',
  'patternProperties',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'enum',
  'const',
  '$ref',
  '$defs',
  'definitions',
  '$id',
  '$anchor',
  '$dynamicRef',
  '$dynamicAnchor',
  'pattern',
  'format',
  'minLength',
  'minimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'uniqueItems',
  'contains',
  'minContains',
  'propertyNames',
  'dependentSchemas',
  'dependentRequired',
  'dependencies',
  'unevaluatedProperties',
  'unevaluatedItems',
  'additionalItems',
  'maxProperties',
  'description',
  'default',
];
const REFS = ['#', '#/$defs/a', '#/properties/x', '#a', '%zz', '#/%zz', 'a#%zz', 'http://x/y#/a', 'b.json#/%E0'];
const REGEXES = ['[', 'a]{', '^a+$', '(a+)+', '\\d', '(?<=a)b', '\\1(a)'];
const STRINGS = [...REFS, ...REGEXES, 'string', 'object', 'array', 'integer', 'null', 'x', 'date-time', '', '/', '~1'];

const { schema } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(...STRINGS),
    fc.integer({ min: -2, max: 3 }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    tie('schema'),
  ),
  // Any keyword with any value, and often a reference or a regex where the compiler reads one.
  schema: fc
    .array(
      fc.oneof(
        fc.tuple(fc.oneof(fc.constantFrom(...KEYWORDS), fc.constantFrom(...STRINGS)), tie('value')),
        fc.tuple(fc.constantFrom('$ref', '$dynamicRef'), fc.constantFrom(...REFS)),
        fc.tuple(fc.constant('pattern'), fc.constantFrom(...REGEXES)),
        fc.tuple(fc.constant('patternProperties'), fc.dictionary(fc.constantFrom(...REGEXES), tie('value'))),
      ),
      { maxLength: 4 },
    )
    .map((entries) => Object.fromEntries(entries)),
}));

function compileThrows(inputSchema: unknown): boolean {
  try {
    compileLinear(inputSchema);
    return false;
  } catch {
    return true;
  }
}

describe('property: the contract check', () => {
  it('refuses every tool schema that typebox cannot compile', () => {
    let thrown = 0;
    fc.assert(
      fc.property(schema, (extra) => {
        // As the loader sees it: plain JSON, from a worker or a server or an inline plugin alike.
        const inputSchema = JSON.parse(
          JSON.stringify({ type: 'object', description: 'Input.', ...extra, additionalProperties: false }),
        ) as unknown;
        if (!compileThrows(inputSchema)) return;
        thrown++;
        const tool = { name: 't', description: 'T.', inputSchema, execute: () => '' };
        const exported = { name: 'p', version: '1.0.0', tools: [tool] };
        const refused = checkPlugin('/p.ts', describePlugin(exported), [describeTool(tool)]).filter(
          (v) => v.severity === 'error',
        );
        expect(refused, JSON.stringify(inputSchema)).to.not.deep.equal([]);
      }),
      { numRuns: RUNS * 10 },
    );
    expect(thrown, 'schemas the compiler refused').to.be.greaterThan(0);
  });
});
