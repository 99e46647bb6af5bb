/**
 * What one invalid call costs the host's thread for each hostile schema recipe, before (typebox's
 * own compile and error listing, as the host used them) and after (core/schema-validator.ts), and
 * whether the load check now refuses the schema, or the input before its check (too large).
 *
 *   ITEMS=2000 node --import tsx scripts/schema-attacks.ts [recipe…]
 *
 * Times are wall-clock on one run: on a loaded machine, read them as orders of magnitude.
 */
import { Compile } from 'typebox/compile';
import { checkPlugin } from '../core/check.ts';
import { describePlugin, describeTool } from '../core/plugin-report.ts';
import { checkedLinearSchema, linearSchema } from '../core/schema-patterns.ts';
import { tooCostlyToCheck, validatorFor } from '../core/shared-validators.ts';
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
  /** A loop through a nested resource's `$id`: `sub` (relative to the root's base) back to `root`. */
  nestedIdLoop: () => ({
    schema: {
      $id: 'http://schemas.test/root',
      type: 'object',
      allOf: [{ $ref: 'sub' }],
      $defs: { sub: { $id: 'http://schemas.test/sub', allOf: [{ $ref: 'root' }] } },
    },
    input: {},
  }),
  /** A patternProperties value is compiled as a root of its own: its `"#"` is itself, a loop. */
  patternSelfRef: () => ({
    schema: { type: 'object', patternProperties: { '^a': { allOf: [{ $ref: '#' }] } } },
    input: { a: 1 },
  }),
  /** A pointer into `default`, which the check applies as a schema, and which refers back. */
  defaultTarget: () => ({
    schema: { type: 'object', default: { allOf: [{ $ref: '#' }] }, allOf: [{ $ref: '#/default' }] },
    input: {},
  }),
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

/** Schemas that load, with inputs whose check (valid or not) is linear but long: refused before the check. */
const TOO_BIG: Record<string, () => Recipe> = {
  /** 1,000,000 distinct numbers under `uniqueItems` (6.9 MB of JSON): each hashed. */
  uniqueMillion: () => ({
    schema: { type: 'object', properties: { list: { type: 'array', description: 'L.', uniqueItems: true } } },
    input: { list: Array.from({ length: 1_000_000 }, (_, i) => i) },
  }),
  /** 30,000 strings, each against twelve levels of an allOf of two references to the next. */
  fanItems: () => {
    const $defs: Record<string, unknown> = { d12: { type: 'string' } };
    for (let i = 0; i < 12; i++)
      $defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    return {
      schema: {
        type: 'object',
        properties: { list: { type: 'array', description: 'L.', items: { $ref: '#/$defs/d0' } } },
        $defs,
      },
      input: { list: Array.from({ length: 30_000 }, () => 's') },
    };
  },
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
  ...Object.entries(TOO_BIG),
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
        const validator = validatorFor(schema);
        const [counted, tooBig] = ms(() => tooCostlyToCheck(validator, input));
        if (tooBig) return `refused before the check (${counted}): ${String(tooBig).slice(0, 90)}…`;
        const [took, problems] = ms(() => validator.Check(input) || validator.problems(input));
        return `${took}: ${JSON.stringify(problems).slice(0, 90)}`;
      })();
  console.log(`${name}: before Check ${check}, Errors ${errors}; after ${after}`);
}
