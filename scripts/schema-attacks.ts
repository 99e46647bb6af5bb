/**
 * What one invalid call costs the host's thread for each hostile schema recipe, before (typebox's
 * own compile and error listing, as the host used them) and after (core/schema-validator.ts), and
 * whether the load check now refuses the schema.
 *
 *   ITEMS=2000 node --import tsx scripts/schema-attacks.ts [recipe…]
 *
 * Times are wall-clock on one run: on a loaded machine, read them as orders of magnitude.
 */
import { Compile } from 'typebox/compile';
import { checkPlugin } from '../core/check.ts';
import { describePlugin, describeTool } from '../core/plugin-report.ts';
import { checkedLinearSchema, linearSchema } from '../core/schema-patterns.ts';
import { compileSchema } from '../core/schema-validator.ts';
import { RECIPES, type Recipe } from '../test/fixtures/hostile/schema-recipes.ts';

const items = Number(process.env.ITEMS ?? 2000);

/** Recipes the load check refuses now: the check itself (valid or not) stalled. */
const REFUSED: Record<string, () => Recipe> = {
  /** 5,000 patterns whose schema is `true` (not counted by the size bound), 2,000 keys tested against each. */
  patternProperties: () => {
    const patterns = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`^k${i}x$`, true]));
    const input: Record<string, unknown> = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`key${i}`, 's']));
    input.zzz = 1;
    return {
      schema: { type: 'object', properties: {}, patternProperties: patterns, additionalProperties: { type: 'string' } },
      input,
    };
  },
  /** Two branches of an anyOf lead back to the same schema: 2^depth for an array nested 26 deep (54 bytes). */
  doublingRecursion: () => {
    const n = {
      anyOf: [
        { type: 'array', items: { $ref: '#/$defs/n' } },
        { type: 'array', items: { $ref: '#/$defs/n' } },
        { type: 'string' },
      ],
    };
    let value: unknown = 1;
    for (let i = 0; i < 26; i++) value = [value];
    return { schema: { type: 'object', properties: { a: { $ref: '#/$defs/n' } }, $defs: { n } }, input: { a: value } };
  },
  /** Thirty definitions, each a oneOf of two references to the next: 2^30 checks of one string, no recursion. */
  fanOut: () => {
    const $defs: Record<string, unknown> = { d30: { type: 'string' } };
    for (let i = 0; i < 30; i++)
      $defs[`d${i}`] = { oneOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    return { schema: { type: 'object', properties: { a: { $ref: '#/$defs/d0' } }, $defs }, input: { a: 'x' } };
  },
  /** A definition that is an allOf of a reference to itself: no value ends it, the stack overflows. */
  loop: () => ({
    schema: {
      type: 'object',
      properties: { a: { $ref: '#/$defs/x' } },
      $defs: { x: { allOf: [{ $ref: '#/$defs/x' }] } },
    },
    input: { a: 'x' },
  }),
};

function ms(work: () => unknown): [string, unknown] {
  const start = performance.now();
  let result: unknown;
  try {
    result = work();
  } catch (error) {
    result = error; // a loop's stack overflow: what a call met
  }
  const threw = result instanceof Error ? ` (threw ${result.name})` : '';
  return [`${(performance.now() - start).toFixed(0)} ms${threw}`, result];
}

const only = process.argv.slice(2);
const all: [string, () => Recipe][] = [
  ...Object.entries(RECIPES).map(([name, make]): [string, () => Recipe] => [name, () => make(items)]),
  ...Object.entries(REFUSED),
];
for (const [name, make] of all) {
  if (only.length > 0 && !only.includes(name)) continue;
  const { schema, input } = make();
  const tool = { name: 't', description: 'T.', inputSchema: schema, execute: () => '' };
  const exported = { name: 'p', version: '1.0.0', tools: [tool] };
  const refused = checkPlugin('/p.ts', describePlugin(exported), [describeTool(tool)]).find(
    (v) => v.severity === 'error',
  );
  const before = Compile((refused ? linearSchema(schema, '', () => {}) : checkedLinearSchema(schema)) as never);
  const [check] = ms(() => before.Check(input));
  // A refused recipe's errors are not listed: the doubling one would take hours.
  const errors = refused ? 'not run' : ms(() => before.Errors(input))[0];
  const after = refused
    ? `refused at load: ${refused.pointer}: ${refused.message.slice(0, 90)}…`
    : (() => {
        const validator = compileSchema(checkedLinearSchema(schema));
        const [took, problems] = ms(() => validator.Check(input) || validator.problems(input));
        return `${took}: ${JSON.stringify(problems).slice(0, 90)}`;
      })();
  console.log(`${name}: before Check ${check}, Errors ${errors}; after ${after}`);
}
