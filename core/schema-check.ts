/**
 * The contract check's part for schemas (docs/plugins.md, "What a schema may not do"): a tool's input and output
 * schemas checked for what TypeBox's compiler does not catch (forbidden keys, dangling references,
 * regexes that must run linear, undescribed or open properties), for what would cost the host's
 * thread too much to compile or to check a value against, and then compiled. check.ts checks the
 * rest of a plugin and a tool and calls in here for their schemas.
 */
import { messageOf } from './errors.ts';
import { escapeSegment, segments, valueAt } from './json-pointer.ts';
import { kindOf } from './plugin-report.ts';
import { FORBIDDEN_KEYS } from './safe-json.ts';
import { exponentialRecursion, overApplied, unfollowedReferences } from './schema-recursion.ts';
import { linearSchema, MAP as SCHEMA_MAPS } from './schema-patterns.ts';
import { DATA_KEYWORDS, sizeOf } from './schema-validator.ts';
import { SchemaCache, schemaKey, validatorFor } from './shared-validators.ts';
import type { Violation } from './types.ts';
import { WORKSPACE_PATH } from './workspace-paths.ts';

/** Where a violation is reported: its JSON pointer below the tool, the message, and how severe it is (error by default). */
export type AddViolation = (pointer: string, message: string, severity?: Violation['severity']) => void;
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

/**
 * A tool's input schema (`inputSchema`: providers require an object) or output schema
 * (`outputSchema`: MCP serves `data` as `structuredContent`, which is an object).
 */
export function checkObjectSchema(
  schema: unknown,
  at: string,
  add: AddViolation,
  style: Violation['severity'],
  why: string,
): void {
  const key = at.slice(1);
  if (kindOf(schema) !== 'object') {
    add(at, `${key} must be a JSON-Schema object (Type.Object(...)), got ${kindOf(schema)}`);
    return;
  }
  const s = schema as Record<string, unknown>;
  if (s.type !== 'object') {
    add(`${at}/type`, `${key} must have type "object" (${why}), got ${JSON.stringify(s.type) ?? 'undefined'}`);
  }
  checkSchema(s, at, add, { lenient: style === 'warning' });
}

/**
 * Structural checks TypeBox's compiler does not make, regexes that must run linear, then a compile.
 * The compile stays here, at load (in the plugin's own worker or process when it is isolated, under
 * its load timeout): a schema the compiler throws on must fail the load, not each call, and what it
 * throws on is open-ended (an enum of thousands of values overflows the parser of the code it
 * generates, a `$ref` chain its recursion, an `$id` it cannot resolve against throws `Invalid URL`).
 * Size is bounded first (a live schema may share objects, which every walk below would expand),
 * then nesting, since the walks below recurse as deep as the schema goes.
 */
export function checkSchema(schema: unknown, at: string, add: AddViolation, { lenient }: { lenient: boolean }): void {
  const tooBig = schemaTooBig(schema);
  if (tooBig) {
    add(at, tooBig);
    return;
  }
  // What is found depends on the schema's text, where it sits and how strict the check is, nothing
  // else (schemas reach here as plain data): a schema repeated across tools and plugins is checked once.
  const key = schemaKey(schema);
  const memo = key === undefined ? undefined : `${lenient}${at}\n${key}`;
  let found = checked.get(memo);
  if (!found) {
    const violations: Parameters<AddViolation>[] = [];
    schemaViolations(schema, at, (...violation) => violations.push(violation), lenient, key);
    found = checked.set(memo, violations);
  }
  for (const violation of found) add(...violation);
}

const checked = new SchemaCache<Parameters<AddViolation>[]>();

function schemaViolations(
  schema: unknown,
  at: string,
  add: AddViolation,
  lenient: boolean,
  key: string | undefined,
): void {
  const deep = tooDeep(schema, MAX_SCHEMA_DEPTH);
  if (deep !== undefined) {
    add(
      at + deep,
      `the schema nests deeper than ${MAX_SCHEMA_DEPTH} levels (objects and arrays): flatten it, or name the repeated part under $defs and $ref it`,
    );
    return;
  }
  const costly = costlyCheck(schema);
  if (costly) {
    add(at + costly[0], costly[1]);
    return;
  }
  const before = { count: 0 };
  const counting: AddViolation = (p, m, sev) => {
    if ((sev ?? 'error') === 'error') before.count++;
    add(p, m, sev);
  };
  forbiddenKeys(schema, at, counting);
  pathMarks(schema, at, counting, at === '/inputSchema' ? 'input' : 'elsewhere');
  danglingRefs(schema, schema, at, counting);
  walkSchema(schema, at, counting, lenient ? 'warning' : 'error');
  const linear = linearSchema(schema, at, counting);
  if (before.count > 0) return;
  try {
    validatorFor(schema, linear, key);
  } catch (error) {
    add(at, `schema does not compile: ${messageOf(error)}`);
  }
}

/**
 * Where following the schema's references, as its check does, would never end or stall the host
 * (schema-recursion.ts), and why; undefined when it would not.
 */
function costlyCheck(schema: unknown): [pointer: string, message: string] | undefined {
  const unfollowed = unfollowedReferences(schema);
  if (unfollowed !== undefined)
    return [
      unfollowed,
      "the schema's references land on different schemas along too many paths (each nested $id, and each $dynamicAnchor in scope, can change where one lands): the host cannot follow them all to rule out a check that never ends; use fewer nested $ids and $dynamicAnchors, or refer by a JSON pointer from the root",
    ];
  const doubling = exponentialRecursion(schema);
  if (doubling !== undefined)
    return [
      doubling,
      'the schema recurses through more than one path per level of the value (two branches of an anyOf, allOf or oneOf, or if and then, leading back here): checking a value nested N deep takes 2^N steps, and one short input would stall the host; give each level a single path back',
    ];
  // Bounded like the schema's size: expanded through its references, a schema may cost its check
  // no more than the biggest schema allowed written out.
  const fanOut = overApplied(schema, MAX_SCHEMA_NODES);
  if (fanOut === undefined) return undefined;
  return [
    fanOut.pointer,
    fanOut.loop
      ? "the schema refers back to itself for the same value (through $ref and allOf, anyOf, oneOf, not, if/then/else, or a $ref alone), never entering a property or an item: its check never ends, and each call would overflow the host's stack; make each reference back to it go through a property or an item"
      : `the schema applies one schema to the same value over ${MAX_SCHEMA_NODES} times through $refs (each an allOf, anyOf or oneOf of two or more references to the next): each call would check the value that many times and stall the host; refer to each definition once per value, or merge the definitions`,
  ];
}

/**
 * Objects and arrays nested in a schema, at most. typebox's compiler recurses once or more per
 * level and ran out of stack at ~400; no hand-written schema comes near this.
 */
const MAX_SCHEMA_DEPTH = 128;

/**
 * What the host's own thread pays for a schema: compiling it, and telling what is wrong with an
 * input (the validator's errors), resolve each `$ref` by walking the whole schema again. Measured on
 * typebox 1.x: 1,000 `$ref`s in a 72 KB schema took 0.3–0.5 s to compile, 1,500 in 423 KB 2.3 s, and
 * the errors for one 617-byte input (300 items through 50 `$ref`s in 20,000 objects) 5.7 s: the
 * errors cost grows with the input too, hence the tight product. Real tool schemas are far below
 * both limits (a few hundred objects, a few dozen `$ref`s at most).
 */
const MAX_SCHEMA_NODES = 50_000;
const MAX_REF_WORK = 100_000;

/** Why a schema is too big for the host to compile and check on its own thread, or undefined. */
export function schemaTooBig(schema: unknown): string | undefined {
  const size = sizeOf(schema, MAX_SCHEMA_NODES);
  if (size.nodes > MAX_SCHEMA_NODES)
    return `the schema holds over ${MAX_SCHEMA_NODES} objects, arrays and array entries: the host compiles and checks it on its own thread, and one this big stalls every other call`;
  if (size.refs * size.nodes > MAX_REF_WORK)
    return `the schema has ${size.refs} $refs in ${size.nodes} objects, arrays and array entries: each $ref is resolved by walking the whole schema, so the host allows at most ${MAX_REF_WORK} for the two multiplied (a first call, or one invalid input, would stall every other call for seconds); share less through $ref, or make the schema smaller`;
  return undefined;
}

/** The pointer (below `value`) of the first object or array nested `depth` levels down, if any. */
function tooDeep(value: unknown, depth: number): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (depth === 0) return '';
  for (const key of Object.keys(value)) {
    const below = tooDeep((value as Record<string, unknown>)[key], depth - 1);
    if (below !== undefined) return `/${escapeSegment(key)}${below}`;
  }
  return undefined;
}

/**
 * Refuses `__proto__`, `constructor` and `prototype` as a key anywhere in a schema (a property
 * name, a `$defs` entry, a key inside a `default`): the host copies defaults into input and walks
 * schemas, and one such key could lead there to `Object.prototype`. An error for MCP servers too,
 * whose style rules only warn: this is no matter of style.
 */
function forbiddenKeys(value: unknown, at: string, add: AddViolation): void {
  if (value === null || typeof value !== 'object') return;
  for (const key of Object.keys(value)) {
    const p = `${at}/${escapeSegment(key)}`;
    if (FORBIDDEN_KEYS.has(key))
      add(
        p,
        `"${key}" is not allowed as a key in a schema: it names a prototype, and the host would follow it when filling defaults`,
      );
    else forbiddenKeys((value as Record<string, unknown>)[key], p, add);
  }
}

/**
 * `x-workspace-path` only where the host acts on it (workspace-paths.ts): `true` on a top-level
 * string property of the input schema. Anywhere else it was ignored without a word: the policy read
 * that path as written, and the mark went out to the model, whose strict providers refuse it.
 * `where` is `input` at the input schema's root, `property` on one of its top-level properties.
 */
function pathMarks(schema: unknown, at: string, add: AddViolation, where: 'input' | 'property' | 'elsewhere'): void {
  if (schema === null || typeof schema !== 'object') return;
  for (const [key, value] of Object.entries(schema)) {
    const p = `${at}/${escapeSegment(key)}`;
    if (key === WORKSPACE_PATH && !Array.isArray(schema)) {
      if (where !== 'property' || value !== true || (schema as { type?: unknown }).type !== 'string')
        add(
          p,
          `x-workspace-path marks a top-level string property of inputSchema only, as true: here the host does not rewrite the path, and a policy rule would read it as written`,
        );
    } else if (SCHEMA_MAPS.has(key) && value !== null && typeof value === 'object' && !Array.isArray(schema)) {
      const next = key === 'properties' && where === 'input' ? 'property' : 'elsewhere';
      for (const [name, sub] of Object.entries(value)) pathMarks(sub, `${p}/${escapeSegment(name)}`, add, next);
    } else if (!DATA_KEYWORDS.has(key) || Array.isArray(schema)) {
      // A mark inside a value a schema holds (a default, an enum) marks nothing.
      pathMarks(value, p, add, 'elsewhere');
    }
  }
}

/**
 * A `$ref` to a place in the same schema (`#/$defs/x`) that holds no schema. The compiler accepts
 * it, and then every value fails there ("not allowed here"): each call would be refused as invalid
 * input, and the model told to fix what it cannot. And a `$ref` or `$dynamicRef` elsewhere whose
 * fragment does not decode (`other.json#%zz`), on which the compiler throws.
 */
function danglingRefs(root: unknown, value: unknown, at: string, add: AddViolation): void {
  if (value === null || typeof value !== 'object') return;
  const { $ref: ref, $dynamicRef: dynamicRef, $id: id } = value as Record<string, unknown>;
  // `#/…` points into the resource it is written in: a schema with an `$id` of its own starts one.
  if (typeof id === 'string' && !Array.isArray(value)) root = value;
  if (typeof ref === 'string' && ref.startsWith('#')) {
    let target: unknown;
    try {
      target = valueAt(root, segments(decodeURIComponent(ref.slice(1))));
    } catch {
      target = undefined; // a fragment that does not decode points nowhere either
    }
    if (target === null || (typeof target !== 'object' && typeof target !== 'boolean'))
      add(
        `${at}/$ref`,
        `$ref ${JSON.stringify(ref)} points to no schema in this schema: define it (under $defs) or fix the pointer`,
      );
  } else undecodable('$ref', ref, at, add);
  undecodable('$dynamicRef', dynamicRef, at, add);
  for (const [key, sub] of Object.entries(value))
    if (!DATA_KEYWORDS.has(key)) danglingRefs(root, sub, `${at}/${escapeSegment(key)}`, add);
}

function undecodable(keyword: string, uri: unknown, at: string, add: AddViolation): void {
  if (typeof uri !== 'string' || !uri.includes('#')) return;
  try {
    decodeURIComponent(uri.slice(uri.indexOf('#') + 1));
  } catch {
    add(
      `${at}/${keyword}`,
      `${keyword} ${JSON.stringify(uri)} has a fragment that does not decode: a % must be followed by two hex digits`,
    );
  }
}

/** What a property without a description costs, by the schema it is in: who reads it, and for what. */
function undescribedWhy(at: string): string {
  if (at.startsWith('/outputSchema')) return 'the model cannot know what the value means';
  if (at.startsWith('/options')) return 'users cannot know what to set there';
  return 'the model cannot know what to put there';
}

function walkSchema(schema: unknown, at: string, add: AddViolation, style: Violation['severity']): void {
  if (typeof schema === 'boolean') return;
  if (kindOf(schema) !== 'object') {
    add(at, `a schema must be an object, got ${kindOf(schema)}`);
    return;
  }
  const s = schema as Record<string, unknown>;
  const types = Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type];
  for (const t of types)
    if (typeof t !== 'string' || !JSON_TYPES.has(t)) add(`${at}/type`, `unknown JSON type ${JSON.stringify(t)}`);
  if (s.enum !== undefined && !Array.isArray(s.enum)) add(`${at}/enum`, 'enum must be an array');
  // A limit of the wrong type is not enforced at all (`minLength: '3'` lets "" through).
  for (const key of COUNT_KEYWORDS) {
    const v = s[key];
    if (v !== undefined && !(Number.isInteger(v) && (v as number) >= 0))
      add(
        `${at}/${key}`,
        `${key} must be a whole number, 0 or more, got ${JSON.stringify(v)}: it limits nothing otherwise`,
        style,
      );
  }
  for (const key of BOUND_KEYWORDS) {
    const v = s[key];
    // Draft 4's boolean exclusiveMinimum / exclusiveMaximum modify minimum / maximum.
    if (v !== undefined && !Number.isFinite(v) && !(key.startsWith('exclusive') && typeof v === 'boolean'))
      add(`${at}/${key}`, `${key} must be a number, got ${JSON.stringify(v)}: it limits nothing otherwise`, style);
  }

  if (s.properties !== undefined) {
    if (kindOf(s.properties) !== 'object') {
      add(`${at}/properties`, `properties must be an object, got ${kindOf(s.properties)}`);
    } else {
      for (const [key, sub] of Object.entries(s.properties as Record<string, unknown>)) {
        const p = `${at}/properties/${escapeSegment(key)}`;
        if (kindOf(sub) === 'object' && !hasDescription(sub as Record<string, unknown>)) {
          add(`${p}/description`, `property "${key}" has no description: ${undescribedWhy(at)}`, style);
        }
        walkSchema(sub, p, add, style);
      }
    }
  }
  if (s.required !== undefined) {
    if (!Array.isArray(s.required)) {
      add(`${at}/required`, 'required must be an array of property names');
    } else {
      const props = kindOf(s.properties) === 'object' ? (s.properties as Record<string, unknown>) : {};
      s.required.forEach((name, i) => {
        if (typeof name !== 'string' || !Object.hasOwn(props, name)) {
          add(`${at}/required/${i}`, `required names ${JSON.stringify(name)}, which is not a property`);
        }
      });
    }
  }
  if (s.items !== undefined) {
    if (Array.isArray(s.items))
      s.items.forEach((sub, i) => {
        walkSchema(sub, `${at}/items/${i}`, add, style);
      });
    else walkSchema(s.items, `${at}/items`, add, style);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = s[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) add(`${at}/${key}`, `${key} must be an array`);
    else
      list.forEach((sub, i) => {
        walkSchema(sub, `${at}/${key}/${i}`, add, style);
      });
  }
  if (kindOf(s.additionalProperties) === 'object')
    walkSchema(s.additionalProperties, `${at}/additionalProperties`, add, style);
}

const COUNT_KEYWORDS = ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties'];
const BOUND_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'];

/** Keywords that say what a value may be: a schema with none of them accepts anything. */
const CONSTRAINING = ['type', 'enum', 'const', 'anyOf', 'oneOf', 'allOf', 'not', '$ref', 'properties', 'items'];

/**
 * The pitfalls of an over-broad schema, as warnings (`check --strict` makes them errors): a value
 * that may be anything (`Type.Any()`, `Type.Unknown()`) tells the model nothing, and an object open
 * to undeclared keys lets a misspelt key through as if it were absent.
 */
export function openSchemas(schema: unknown, at: string, add: AddViolation): void {
  if (kindOf(schema) !== 'object') return;
  const s = schema as Record<string, unknown>;
  if (!CONSTRAINING.some((key) => s[key] !== undefined)) {
    add(at, 'accepts any value (Type.Any or Type.Unknown): give it a type, so the model knows what to send', 'warning');
    return;
  }
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (
    types.includes('object') &&
    s.additionalProperties !== false &&
    kindOf(s.additionalProperties) !== 'object' &&
    s.patternProperties === undefined
  ) {
    add(
      at,
      'object accepts keys it does not declare: add { additionalProperties: false }, so a misspelt key is refused instead of ignored',
      'warning',
    );
  }
  if (kindOf(s.properties) === 'object') {
    for (const [key, sub] of Object.entries(s.properties as Record<string, unknown>))
      openSchemas(sub, `${at}/properties/${escapeSegment(key)}`, add);
  }
  if (kindOf(s.items) === 'object') openSchemas(s.items, `${at}/items`, add);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = s[key];
    if (Array.isArray(list))
      list.forEach((sub, i) => {
        openSchemas(sub, `${at}/${key}/${i}`, add);
      });
  }
}

/** A property is described by `description` (or `title`), or by a `$ref`'d/combined schema it points to. */
function hasDescription(s: Record<string, unknown>): boolean {
  return (typeof s.description === 'string' && s.description.trim() !== '') || typeof s.$ref === 'string';
}
