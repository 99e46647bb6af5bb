/**
 * The one home for compiling a schema a plugin or an MCP server supplied (tool input, output,
 * plugin options, `patternProperties` values) and for telling what is wrong with a value.
 *
 * The check (valid or not) is typebox's compiled one, exact. Telling *where* a value is wrong is
 * another matter: typebox lists errors with its interpreter, which resolves each `$ref`,
 * `$dynamicRef` and `$recursiveRef` by walking the schema again every time it meets one (with a
 * URL parsed per `$id` and `$anchor` on the way), and walks every item of a valid array it must
 * still look through. One invalid input to a schema that passes the load-time bounds took 24–42 s
 * of the host's thread (docs/plugins.md has the recipes), and every other call waited. So the
 * listing runs on a work budget: each read typebox makes of the schema is counted, and past the
 * budget, or past MAX_EXPLAIN_CPU_US whatever was counted, the listing stops and one line says the
 * input does not match, without saying where.
 */
import type { TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import { Format } from 'typebox/format';
import { Check as interpretedCheck, Errors } from 'typebox/value';
import { CheckTooCostly, chargeScan, metered, SCAN_STEPS } from './check-budget.ts';
import { isRegexFormat } from './linear-regex.ts';
import { type SchemaError, type SchemaProblem, schemaProblems } from './schema-errors.ts';

export interface SchemaValidator {
  /**
   * Whether `value` matches: exact, whatever the schema costs to explain. Throws CheckTooCostly
   * when its format and pattern checks would read its strings past the bound (check-budget.ts).
   */
  Check(value: unknown): boolean;
  /** typebox's errors for a value `Check` refused, or undefined when listing them would cost past the budget. */
  errors(value: unknown): SchemaError[] | undefined;
  /**
   * What is wrong with a value `Check` refused, one problem per line (`schemaProblems`, given
   * `schema` to suggest the key a misspelt one meant); one line when past the budget.
   */
  problems(value: unknown, schema?: unknown): SchemaProblem[];
}

/** The one line told when the errors cost too much to work out. */
export const TOO_COSTLY_TO_EXPLAIN =
  'the input does not match the schema (where: not worked out, the schema is too costly to explain)';

/**
 * Reads of the schema an explanation may make, per object or array of the schema and of the value
 * together, and at most. A normal listing reads each schema object a few dozen times per value it
 * meets (the host's own config schema, 8 errors deep: under 5,000 reads); the recipes that stalled
 * the host made tens of millions. 2,000,000 reads take 0.1–0.2 s on the host's thread.
 */
const STEPS_PER_NODE = 400;
const MIN_STEPS = 20_000;
const MAX_STEPS = 2_000_000;
/**
 * Work the proxies do not see (typebox listing the duplicates of a big `uniqueItems` array, a
 * `patternProperties` regex on each key) is bounded by CPU time instead, read every 1,024 steps.
 * CPU, not wall time: on a loaded machine a normal listing must not be cut short. The process's
 * CPU counts its worker threads too, which can only end a listing sooner.
 */
const MAX_EXPLAIN_CPU_US = 200_000;

const cpuNow = (): number => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

// typebox looks each format up at check time, process-wide: every validator, compiled or
// interpreted, checks `regex` within its budget, and each format charges the characters it reads
// to the check under way (check-budget.ts). `idn-` formats read a character ~10 times slower.
for (const [name, test] of Format.Entries()) {
  if (name === 'regex') continue;
  const perChar = name.startsWith('idn-') ? SCAN_STEPS.idnChar : SCAN_STEPS.char;
  Format.Set(name, (value: string) => {
    chargeScan(value.length * perChar);
    return test(value);
  });
}
Format.Set('regex', isRegexFormat);

/**
 * Compiles a schema that is already linear (schema-patterns.ts) into a validator. The one place a
 * plugin-supplied schema is compiled: keep it a single call, so it can be shared or cached.
 */
export function compileSchema(linear: TSchema): SchemaValidator {
  const { context, schema } = resolvedOnce(linear);
  const compiled: Validator = Compile(context, schema);
  return budgeted(schema, context, (value) => compiled.Check(value));
}

/**
 * A validator that interprets the schema instead of compiling it: for a schema checked once (plugin
 * options, at load), where compiling would cost several times the one check.
 */
export function interpretSchema(linear: TSchema): SchemaValidator {
  const { context, schema } = resolvedOnce(linear);
  return budgeted(schema, context, (value) => interpretedCheck(context, schema, value));
}

function budgeted(
  schema: TSchema,
  context: Record<string, TSchema>,
  check: (value: unknown) => boolean,
): SchemaValidator {
  // Sizes past MAX_STEPS / STEPS_PER_NODE change no budget: counting stops there.
  const enough = MAX_STEPS / STEPS_PER_NODE;
  const schemaNodes = sizeOf(schema, enough).nodes;
  const counted = new WeakMap<object, object>();
  const watched = watch(schema, counted) as TSchema;
  const watchedContext = watch(context, counted) as Record<string, TSchema>;
  const errors = (value: unknown): SchemaError[] | undefined =>
    explaining(STEPS_PER_NODE * (schemaNodes + sizeOf(value, enough).nodes), () =>
      // The value is watched too: typebox's work on it alone (the duplicates of a `uniqueItems`
      // array, listed in quadratic time) reads it, and each read is a chance to stop.
      Errors(watchedContext, watched, watch(value, new WeakMap())),
    );
  return {
    Check: (value) => metered(check, value),
    errors,
    problems: (value, schema) => {
      const list = errors(value);
      return list ? schemaProblems(list, value, schema) : [{ pointer: '', message: TOO_COSTLY_TO_EXPLAIN }];
    },
  };
}

interface Meter {
  steps: number;
  limit: number;
  deadline: number;
}

/** The explanation under way on this thread: a nested one (a `patternProperties` value's) shares its budget. */
let meter: Meter | undefined;
const OVER_BUDGET = Symbol('over budget');

function explaining<T>(steps: number, work: () => T): T | undefined {
  if (meter) return work(); // past the budget, the outer explanation ends, this one with it
  meter = { steps: 0, limit: Math.min(MAX_STEPS, MIN_STEPS + steps), deadline: cpuNow() + MAX_EXPLAIN_CPU_US };
  try {
    return metered(work, undefined);
  } catch (error) {
    if (error === OVER_BUDGET || error instanceof CheckTooCostly) return undefined;
    throw error;
  } finally {
    meter = undefined;
  }
}

function step(): void {
  if (!meter) return;
  meter.steps++;
  if (meter.steps > meter.limit || ((meter.steps & 1023) === 0 && cpuNow() > meter.deadline)) throw OVER_BUDGET;
}

const COUNTING: ProxyHandler<object> = {
  get(target, key, receiver) {
    step();
    return Reflect.get(target, key, receiver);
  },
  has(target, key) {
    step();
    return Reflect.has(target, key);
  },
  ownKeys(target) {
    step();
    return Reflect.ownKeys(target);
  },
  getOwnPropertyDescriptor(target, key) {
    step();
    return Reflect.getOwnPropertyDescriptor(target, key);
  },
};

/**
 * `value` behind proxies that count each read while an explanation is under way. One proxy per
 * object (`counted`), so typebox's identity checks (which `$id` holds a target) still hold;
 * regexes and functions stay bare, since their own methods need the real object. Each proxy
 * stands over a shallow copy: a frozen schema's proxy could not hand out proxies of its parts.
 */
function watch(value: unknown, counted: WeakMap<object, object>): unknown {
  if (value === null || typeof value !== 'object') return value;
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return value;
  const known = counted.get(value);
  if (known) return known;
  const copy = Array.isArray(value) ? [...value] : Object.assign(Object.create(proto) as object, value);
  const proxy = new Proxy(copy, {
    ...COUNTING,
    get(target, key, receiver) {
      step();
      return watch(Reflect.get(target, key, receiver), counted);
    },
  });
  counted.set(value, proxy);
  return proxy;
}

/** Every keyword typebox resolves by walking the schema for its target. */
const REF_KEYWORDS = new Set(['$ref', '$dynamicRef', '$recursiveRef']);

/**
 * Objects, arrays and array entries in a schema or a value, and its references (REF_KEYWORDS),
 * counted as a walk sees them: a live object shared in two places counts twice (as its JSON would), and the count
 * stops past `limit`, so a graph that shares itself at every level costs no more than that to measure.
 */
export function sizeOf(value: unknown, limit: number): { nodes: number; refs: number } {
  let nodes = 0;
  let refs = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && nodes <= limit) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    nodes++;
    const array = Array.isArray(v);
    for (const key of Object.keys(v)) {
      const sub = (v as Record<string, unknown>)[key];
      if (REF_KEYWORDS.has(key) && typeof sub === 'string') refs++;
      else if (sub !== null && typeof sub === 'object') stack.push(sub);
      // An entry the walk does not enter costs typebox as much: a value of `enum` or `required`.
      else if (array) nodes++;
    }
  }
  return { nodes, refs };
}

/**
 * The schema and a context for typebox in which each `$ref` to an `$anchor` (`#name`) is found by
 * name, instead of by walking the whole schema, parsing a URL per node that has an anchor, at each
 * `$ref` met: 200 anchors and one array of 2,000 items took 1.8 s to explain one invalid input.
 * Only when no schema inside has an `$id` of its own: then every `#name` is relative to the root,
 * and a name means one schema. The root then also says it is not draft 4 (`$schema`), which spares
 * each local `$ref` a walk typebox makes for draft 4's nested `$id`s, of which there are none.
 */
export function resolvedOnce(schema: TSchema): { context: Record<string, TSchema>; schema: TSchema } {
  const anchors: Record<string, TSchema> = Object.create(null);
  let plain = true;
  const visit = (value: unknown, root: boolean): void => {
    if (!plain || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, false);
      return;
    }
    const s = value as Record<string, unknown>;
    if (!root && s.$id !== undefined) plain = false;
    if (typeof s.$anchor === 'string') {
      const ref = `#${s.$anchor}`;
      if (Object.hasOwn(anchors, ref)) plain = false;
      anchors[ref] = s as TSchema;
    }
    for (const [key, sub] of Object.entries(s)) if (!DATA_KEYWORDS.has(key)) visit(sub, false);
  };
  visit(schema, true);
  const root = schema as unknown;
  if (!plain || root === null || typeof root !== 'object' || Array.isArray(root))
    return { context: Object.create(null), schema };
  return {
    context: anchors,
    schema: Object.hasOwn(root, '$schema') ? schema : ({ $schema: MODERN, ...root } as TSchema),
  };
}

const MODERN = 'https://json-schema.org/draft/2020-12/schema';

/** Keywords whose value is data, not schema: an `$anchor` key inside one anchors nothing. */
export const DATA_KEYWORDS: ReadonlySet<string> = new Set(['const', 'enum', 'default', 'examples']);
