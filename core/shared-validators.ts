/**
 * What the host works out from a schema, kept by the schema's exact JSON text: plugins of one
 * author (or one generator) repeat the same schema across tools, and a hundred plugins loaded
 * together would otherwise check and compile it a hundred times. The contract check compiles each
 * schema at load (a schema the compiler throws on must fail the load); the registry's validator at
 * the first call is that same compile, found here again.
 *
 * Keys are JSON text, so only plain data is keyed (the loader passes every report through
 * `plainData`): two schemas with the same text compile to validators that answer alike. Bounded:
 * a text over MAX_KEY_CHARS is never kept, and past MAX_ENTRIES entries or MAX_TOTAL_CHARS of keys
 * the oldest entries are dropped (a reload of edited plugins leaves their old schemas behind).
 *
 * Each validator also carries what checking one value against it may cost (`stepsPerValue`), worked
 * out once with it: the dispatcher and output.ts refuse a value whose check would pass
 * MAX_CHECK_STEPS (check-budget.ts) before running it, since the check cannot be stopped once it
 * runs, save by the reading of strings check-budget.ts meters.
 */
import type { TSchema } from 'typebox';
import { MAX_CHECK_STEPS, SCAN_STEPS } from './check-budget.ts';
import { countChars, countInArrays, countValues } from './safe-json.ts';
import { compileLinear } from './schema-patterns.ts';
import { schemasMet, suchSchemasMet } from './schema-recursion.ts';
import { compileSchema, type SchemaValidator } from './schema-validator.ts';
import { thousands } from './thousands.ts';

const MAX_KEY_CHARS = 256 * 1024;
const MAX_ENTRIES = 512;
const MAX_TOTAL_CHARS = 4 * 1024 * 1024;

/** A map by schema text within MAX_ENTRIES and MAX_TOTAL_CHARS of keys, dropping the oldest first. */
export class SchemaCache<V> {
  private readonly entries = new Map<string, V>();
  private chars = 0;

  get(key: string | undefined): V | undefined {
    return key === undefined ? undefined : this.entries.get(key);
  }

  set(key: string | undefined, value: V): V {
    if (key === undefined || this.entries.has(key)) return value;
    while (this.entries.size >= MAX_ENTRIES || this.chars + key.length > MAX_TOTAL_CHARS) {
      const oldest = this.entries.keys().next().value!;
      this.entries.delete(oldest);
      this.chars -= oldest.length;
    }
    this.entries.set(key, value);
    this.chars += key.length;
    return value;
  }
}

/** The key of a schema: its JSON text, or undefined when that is too long to keep (or not JSON). */
export function schemaKey(schema: unknown): string | undefined {
  let text: string | undefined;
  try {
    text = JSON.stringify(schema);
  } catch {
    return undefined; // a cycle or a BigInt: the check reports the schema, nothing is kept
  }
  return text !== undefined && text.length <= MAX_KEY_CHARS ? text : undefined;
}

/** A compiled schema, and what checking one value of an input against it may cost. */
export interface CheckedValidator extends SchemaValidator {
  /** Steps of the check one value of the input may take, at most: the schemas it may meet. */
  readonly stepsPerValue: number;
  /** Steps of hashing one value for `uniqueItems`, once for each array it sits in; 0 without one. */
  readonly stepsPerHash: number;
  /**
   * `minLength` and `maxLength` checks one string (or key) may meet, by limit: `[n, k]` where `k`
   * checks have a limit of `n` or more, ascending in `n`. typebox counts a string's code points for
   * one only when its length lies between the limit and twice it, inside the compiled check where
   * check-budget.ts cannot meter it, so their reading is bounded before the check; a long string
   * meets only the checks with a limit of half its length or more.
   */
  readonly lengthChecks: readonly (readonly [limit: number, checks: number])[];
}

const validators = new SchemaCache<CheckedValidator>();

/**
 * The compiled validator of `schema` (its regexes made linear: schema-patterns.ts), compiled once
 * per schema text. `linear` is that rewrite when the caller has it already (the contract check).
 */
export function validatorFor(schema: unknown, linear?: unknown, key = schemaKey(schema)): CheckedValidator {
  const known = validators.get(key);
  if (known) return known;
  const compiled = linear === undefined ? compileLinear(schema) : compileSchema(linear as TSchema);
  return validators.set(key, {
    ...compiled,
    stepsPerValue: schemasMet(schema, MAX_CHECK_STEPS),
    stepsPerHash: hasUniqueItems(schema) ? UNIQUE_ITEM_STEPS : 0,
    lengthChecks: lengthChecksOf(schema),
  });
}

/** The largest `minLength` or `maxLength` of a schema object, or undefined without one. */
function lengthLimit(s: Record<string, unknown>): number | undefined {
  const limits = [s.minLength, s.maxLength].filter((n): n is number => typeof n === 'number');
  return limits.length > 0 ? Math.max(...limits) : undefined;
}

function lengthChecksOf(schema: unknown): CheckedValidator['lengthChecks'] {
  const limits = new Set<number>();
  const stack = [schema];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    const limit = Array.isArray(v) ? undefined : lengthLimit(v as Record<string, unknown>);
    if (limit !== undefined) limits.add(limit);
    for (const sub of Object.values(v)) stack.push(sub);
  }
  // One count per distinct limit: a schema holds few (a generated one may repeat one everywhere).
  return [...limits]
    .sort((a, b) => a - b)
    .map((n) => [n, suchSchemasMet(schema, MAX_CHECK_STEPS, (s) => (lengthLimit(s) ?? -1) >= n)] as const);
}

/** How many of `lengthChecks` a string of `length` may make count its code points: those with a limit of half of it or more. */
function lengthChecksFor(lengthChecks: CheckedValidator['lengthChecks'], length: number): number {
  for (const [limit, checks] of lengthChecks) if (2 * limit >= length) return checks;
  return 0;
}

/**
 * What hashing one value for `uniqueItems` costs, in schemas met: ~4 µs a value (1,000,000
 * distinct numbers took 4.3 s), where meeting a schema takes 2–5 ns. A value inside nested arrays
 * is hashed at each of them: 400 levels over 20,000 numbers took 3.5 s when each value was
 * counted once.
 */
const UNIQUE_ITEM_STEPS = 1_000;
/** Characters of a string or key that cost as much to hash as a value: 38 ns each, measured. */
const HASHED_CHARS_PER_VALUE = 100;

function hasUniqueItems(value: unknown): boolean {
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (!Array.isArray(v) && (v as Record<string, unknown>).uniqueItems === true) return true;
    stack.push(...Object.values(v));
  }
  return false;
}

const BOUND = `the host checks at most ${thousands(MAX_CHECK_STEPS)} (values times schemas) per call, on its own thread`;

/**
 * Why checking `value` would take past MAX_CHECK_STEPS, its values times what one may cost, or
 * undefined. Asked before the check: the check itself cannot be stopped once it runs. `atMost`
 * and `charsAtMost` are bounds on the values in `value`, and the characters of its strings and
 * keys, the caller knows already.
 */
export function tooCostlyToCheck(
  validator: CheckedValidator,
  value: unknown,
  atMost = Infinity,
  charsAtMost = Infinity,
): string | undefined {
  const { stepsPerValue, stepsPerHash, lengthChecks } = validator;
  // At most every length check for every character: most calls need no walk at all.
  const allLengthChecks = lengthChecks[0]?.[1] ?? 0;
  const readable = Math.floor(MAX_CHECK_STEPS / SCAN_STEPS.char);
  if (allLengthChecks > 0 && charsAtMost * allLengthChecks > readable) {
    const read = countChars(value, readable, (length) => length * lengthChecksFor(lengthChecks, length));
    if (read > readable)
      return `its strings and keys would be read over ${thousands(readable)} times by the minLength and maxLength checks they may meet (each counts the code points of a string between its limit and twice it: up to ${thousands(allLengthChecks)} such checks here); ${BOUND}`;
  }
  const allowed = Math.floor(MAX_CHECK_STEPS / stepsPerValue);
  // `atMost`, values the caller knows `value` cannot pass: most calls need no count at all (a
  // uniqueItems schema does: a value counts once for each array it sits in).
  if (atMost <= allowed && stepsPerHash === 0) return undefined;
  const values = countValues(value, allowed);
  if (values > allowed)
    return `it holds over ${thousands(allowed)} values (objects, arrays, strings, numbers, booleans, nulls), and each may meet up to ${thousands(stepsPerValue)} schemas of the schema; ${BOUND}`;
  if (stepsPerHash === 0) return undefined;
  const hashes = Math.floor((MAX_CHECK_STEPS - values * stepsPerValue) / stepsPerHash);
  if (countInArrays(value, hashes, HASHED_CHARS_PER_VALUE) <= hashes) return undefined;
  return `it holds over ${thousands(hashes)} values in arrays (each ${thousands(HASHED_CHARS_PER_VALUE)} characters of a string or key counting as one more), each counted once for each array it sits in, which uniqueItems hashes at the cost of ${thousands(stepsPerHash)} schemas each time, and each may meet up to ${thousands(stepsPerValue)} schemas of the schema as well; ${BOUND}`;
}
