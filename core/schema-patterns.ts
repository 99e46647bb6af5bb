/**
 * Tool and option schemas come from plugins and MCP servers, and typebox compiles their regexes
 * with the `u` flag, which V8 runs only by backtracking: `"pattern": "^(a+)+$"` froze the host on
 * `aaaa…!`. So a schema is rewritten before it is compiled, every regex in it going through
 * linear-regex.ts: a `pattern` becomes the linear RegExp (typebox takes a RegExp there), and
 * `patternProperties` (whose keys typebox would compile itself) becomes a `~refine` check that
 * tests keys with linear regexes and values with validators of their own. A regex that cannot be
 * linear is a problem at its JSON pointer: the contract check refuses the plugin at load.
 *
 * Limits of the `patternProperties` rewrite: it cannot sit beside `unevaluatedProperties` (keys it
 * matches would not count as evaluated), and a `$ref` under it resolves into `$defs` and
 * `definitions` of the root only. See docs/plugins.md.
 */
import type { TSchema } from 'typebox';
import { escapeSegment } from './json-pointer.ts';
import { schemaPatternRegExp } from './linear-regex.ts';
import { messageOf } from './errors.ts';
import { compileSchema, type SchemaValidator } from './schema-validator.ts';

export type PatternProblem = (pointer: string, message: string) => void;

/** Keywords whose value is one schema, a list of schemas, or a map of names to schemas. */
const ONE = new Set([
  'additionalProperties',
  'additionalItems',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'items',
]);
const LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);
/** Keywords whose value maps names to schemas. */
export const MAP: ReadonlySet<string> = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
]);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `schema` with linear regexes, each problem reported at its pointer below `at`. */
export function linearSchema(schema: unknown, at: string, problem: PatternProblem): unknown {
  const root: { defs?: Record<string, unknown> } = {};
  const out = rewrite(schema, at, problem, root);
  root.defs = rootDefinitions(out);
  return out;
}

/** The definitions of a schema's root that a schema compiled on its own (`separateRoot`) can `$ref`. */
export function rootDefinitions(root: unknown): Record<string, unknown> {
  return isRecord(root)
    ? Object.fromEntries(['$defs', 'definitions'].filter((k) => Object.hasOwn(root, k)).map((k) => [k, root[k]]))
    : {};
}

/**
 * What a `patternProperties` value, or the `additionalProperties` beside one, is compiled as: a
 * schema of its own, with the root's definitions. Its `$ref: "#"` means itself, not the root
 * (schema-recursion.ts follows references in it as such).
 */
export function separateRoot(defs: Record<string, unknown>, schema: unknown): unknown {
  return isRecord(schema) ? { ...defs, ...schema } : schema;
}

/** `linearSchema` for a schema the contract check has passed: a problem throws. */
export function checkedLinearSchema(schema: unknown): TSchema {
  return linearSchema(schema, '', (pointer, message) => {
    throw new Error(`${pointer}: ${message}`);
  }) as TSchema;
}

/** A plugin's schema (contract-checked) compiled: `compileSchema` over `checkedLinearSchema`. */
export function compileLinear(schema: unknown): SchemaValidator {
  return compileSchema(checkedLinearSchema(schema));
}

function rewrite(
  schema: unknown,
  at: string,
  problem: PatternProblem,
  root: { defs?: Record<string, unknown> },
): unknown {
  if (!isRecord(schema)) return schema;
  const sub = (value: unknown, pointer: string) => rewrite(value, pointer, problem, root);
  // Object.fromEntries defines keys as own data properties: a `__proto__` key stays a key.
  const out = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => {
      const here = `${at}/${escapeSegment(key)}`;
      if (key === 'pattern') return [key, pattern(value, here, problem)];
      if (LIST.has(key) && Array.isArray(value)) return [key, value.map((s, i) => sub(s, `${here}/${i}`))];
      if (ONE.has(key)) return [key, sub(value, here)];
      // typebox walks a map given as an array too (`dependencies: [{ … }]`), compiling each entry.
      if (MAP.has(key) && Array.isArray(value)) return [key, value.map((s, i) => sub(s, `${here}/${i}`))];
      if (MAP.has(key) && isRecord(value))
        return [
          key,
          Object.fromEntries(Object.entries(value).map(([k, s]) => [k, sub(s, `${here}/${escapeSegment(k)}`)])),
        ];
      return [key, value];
    }),
  );
  return isRecord(out.patternProperties) ? refinePatternProperties(out, at, problem, root) : out;
}

function pattern(value: unknown, at: string, problem: PatternProblem): unknown {
  if (typeof value !== 'string') {
    problem(at, 'pattern must be a string');
    return value;
  }
  try {
    const re = schemaPatternRegExp(value);
    // typebox's error message prints the pattern: the schema's own, not the one written for the engine.
    Object.defineProperty(re, 'toString', { value: () => value });
    return re;
  } catch (error) {
    problem(at, messageOf(error));
    return value;
  }
}

/**
 * Patterns in one `patternProperties`, at most: the check tests every key of the value against
 * each, and a pattern whose schema is `true` adds nothing to the schema's size bound.
 */
const MAX_PATTERN_PROPERTIES = 64;

function refinePatternProperties(
  schema: Record<string, unknown>,
  at: string,
  problem: PatternProblem,
  root: { defs?: Record<string, unknown> },
): Record<string, unknown> {
  const { patternProperties, additionalProperties, ...rest } = schema as {
    patternProperties: Record<string, unknown>;
    additionalProperties?: unknown;
  };
  if (Object.hasOwn(schema, 'unevaluatedProperties')) {
    problem(
      `${at}/patternProperties`,
      'patternProperties beside unevaluatedProperties is not supported: write the keys under properties, or drop unevaluatedProperties',
    );
  }
  const validator = (s: unknown): (() => SchemaValidator) => {
    let compiled: SchemaValidator | undefined;
    // Compiled at the first check, when the root's definitions are known, for a `$ref` into them.
    return () => (compiled ??= compileSchema(separateRoot(root.defs ?? {}, s) as TSchema));
  };
  const patterns: [RegExp, () => SchemaValidator, string][] = [];
  for (const [key, sub] of Object.entries(patternProperties)) {
    try {
      patterns.push([schemaPatternRegExp(key), validator(sub), key]);
    } catch (error) {
      problem(`${at}/patternProperties/${escapeSegment(key)}`, messageOf(error));
    }
  }
  const count = Object.keys(patternProperties).length;
  if (count > MAX_PATTERN_PROPERTIES)
    problem(
      `${at}/patternProperties`,
      `patternProperties has ${count} patterns, over the ${MAX_PATTERN_PROPERTIES} the host allows: each key of an input is tested against each pattern (2,000 keys against 5,000 patterns stalled the host 7.7 s); merge them into fewer patterns, or name the keys under properties`,
    );
  const named = isRecord(schema.properties) ? schema.properties : {};
  const extra =
    additionalProperties === undefined || additionalProperties === true ? undefined : validator(additionalProperties);

  /** The first key that fails, and why; undefined when every key passes. */
  const failure = (value: unknown): string | undefined => {
    if (!isRecord(value)) return undefined;
    for (const [key, item] of Object.entries(value)) {
      let matched = Object.hasOwn(named, key);
      for (const [re, valid, source] of patterns) {
        if (!re.test(key)) continue;
        matched = true;
        if (!valid().Check(item))
          return `"${key}" (a key matching ${JSON.stringify(source)}): ${valid().errors(item)?.[0]?.message ?? 'invalid'}`;
      }
      if (!matched && extra && !extra().Check(item))
        return additionalProperties === false
          ? `unknown key "${key}"`
          : `"${key}": ${extra().errors(item)?.[0]?.message ?? 'invalid'}`;
    }
    return undefined;
  };
  const refine = {
    check: (value: unknown) => failure(value) === undefined,
    error: (value: unknown) => failure(value) ?? '',
  };
  // An inline plugin's own refinements stay; typebox ignores the whole list if one entry is not a pair of functions.
  const own = Array.isArray(schema['~refine'])
    ? schema['~refine'].filter((r) => isRecord(r) && typeof r.check === 'function' && typeof r.error === 'function')
    : [];
  return { ...rest, '~refine': [...own, refine] };
}
