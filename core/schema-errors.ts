/**
 * Validator errors as one problem per line, for people and for models: unknown keys named, the
 * duplicate `boolean` ("schema is false") errors dropped, and a union's catch-all dropped when a
 * branch said something more specific. When the value has the type of some branches of a union,
 * the other branches' errors ("must be string" for an object entry) are dropped too: only the
 * branches the value could have meant say what is wrong. Config errors, plugin options and tool
 * input all use it.
 */
import { escapeSegment, segments, valueAt } from './json-pointer.ts';
import { patternTextLimit, REGEX_FORMAT_BUDGET, regexFormatCost } from './linear-regex.ts';
import { thousands } from './thousands.ts';

export interface SchemaError {
  keyword: string;
  /** Where in the schema the failing keyword is, as `#/properties/a/items` (TypeBox gives it). */
  schemaPath?: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

export interface SchemaProblem {
  /** JSON pointer to the value concerned ('' for the root). */
  pointer: string;
  message: string;
}

/**
 * `schema`, when given, is the one the errors came from: an unknown key is then told the nearest
 * key the object does accept (`polcy` → `policy`).
 */
export function schemaProblems(errors: readonly SchemaError[], value: unknown, schema?: unknown): SchemaProblem[] {
  const seen = new Set<string>();
  const out: SchemaProblem[] = [];
  const add = (pointer: string, message: string) => {
    const key = `${pointer}\u0000${message}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ pointer, message });
  };
  const unknownKeys = new Set(
    errors
      .filter((e) => e.keyword === 'additionalProperties')
      .flatMap((e) =>
        ((e.params.additionalProperties as string[] | undefined) ?? []).map(
          (k) => `${e.instancePath}/${escapeSegment(k)}`,
        ),
      ),
  );
  const spent: SuggestionBudget = { cells: MAX_SUGGESTION_CELLS };
  const offType = offTypeBranchErrors(errors, value, spent);
  for (const e of errors) {
    if (offType.has(e)) continue;
    if (e.keyword === 'boolean' && unknownKeys.has(e.instancePath)) continue; // restates the unknown key below
    // A literal fails its type too (`must be boolean` beside `must be false`): the literal says it.
    if (e.keyword === 'type' && errors.some((o) => isLiteralError(o) && o.schemaPath === e.schemaPath)) continue;
    if (e.keyword === 'anyOf' && errors.some((o) => o !== e && o.instancePath.startsWith(`${e.instancePath}/`)))
      continue;
    // A union of literals fails once per literal: said once, as the list the value must be in.
    if (e.keyword === 'const' && isLiteralBranch(e, errors)) continue;
    if (e.keyword === 'additionalProperties') {
      const known = schema === undefined ? [] : Object.keys(propertiesAt(schema, e.schemaPath));
      for (const key of (e.params.additionalProperties as string[] | undefined) ?? []) {
        const near = nearest(key, known, spent);
        add(`${e.instancePath}/${escapeSegment(key)}`, near ? `unknown key (did you mean "${near}"?)` : 'unknown key');
      }
    } else if (e.keyword === 'required') {
      add(e.instancePath, e.message);
      // An open object takes any key, so a misspelt required one raises no error of its own: only
      // the missing key is reported, and the caller sees no link to the key it did send.
      if (schema !== undefined) {
        for (const [key, meant] of misspeltRequired(e, value, schema, unknownKeys, spent))
          add(`${e.instancePath}/${escapeSegment(key)}`, `\`${key}\` is not a known key; did you mean \`${meant}\`?`);
      }
    } else if (e.keyword === 'anyOf' && literalsOf(e, errors).length) {
      add(e.instancePath, oneOf(literalsOf(e, errors), valueAt(value, segments(e.instancePath)), spent));
    } else if (e.keyword === 'enum' && Array.isArray(e.params.allowedValues)) {
      add(e.instancePath, oneOf(e.params.allowedValues, valueAt(value, segments(e.instancePath)), spent));
    } else if (e.keyword === 'const' && 'allowedValue' in e.params) {
      add(e.instancePath, `must be ${describeValue(e.params.allowedValue)}`);
    } else if (e.keyword === 'anyOf') {
      add(e.instancePath, `${describeValue(valueAt(value, segments(e.instancePath)))} is not an accepted form here`);
    } else if (e.keyword === 'boolean') {
      add(e.instancePath, 'not allowed here (the schema has no place for this value)');
    } else if (e.keyword === 'pattern' && isTooLong(e, value)) {
      const text = valueAt(value, segments(e.instancePath)) as string;
      add(
        e.instancePath,
        `is ${text.length} characters long: too long to be matched against the pattern ${String(e.params.pattern)} in bounded time (at most ${patternTextLimit(e.params.pattern)}); send a shorter value`,
      );
    } else if (e.keyword === 'format' && e.params.format === 'regex' && isCostlyRegex(e, value)) {
      const text = valueAt(value, segments(e.instancePath)) as string;
      add(
        e.instancePath,
        `is ${thousands(text.length)} characters long: too long to be checked as a regular expression (format "regex") in bounded time (at most ${thousands(REGEX_FORMAT_BUDGET)} characters, each \\p{…} or \\P{…} counting 25 more); send a shorter value`,
      );
    } else {
      add(e.instancePath, e.message);
    }
  }
  return out;
}

/**
 * For each failed union where the value has the type of some branches but not of others: the
 * errors of the others, and the union's own catch-all (a branch of the right type says more).
 * A union of literals keeps its catch-all, which lists the values.
 */
function offTypeBranchErrors(
  errors: readonly SchemaError[],
  value: unknown,
  spent: SuggestionBudget,
): Set<SchemaError> {
  const drop = new Set<SchemaError>();
  for (const u of errors) {
    if (u.keyword !== 'anyOf' || u.schemaPath === undefined) continue;
    const prefix = `${u.schemaPath}/anyOf/`;
    const byBranch = new Map<string, SchemaError[]>();
    for (const o of errors) {
      if (o === u || !o.schemaPath?.startsWith(prefix)) continue;
      const branch = o.schemaPath.slice(prefix.length).split('/')[0]!;
      const list = byBranch.get(branch);
      if (list) list.push(o);
      else byBranch.set(branch, [o]);
    }
    const at = valueAt(value, segments(u.instancePath));
    const wrongType = [...byBranch.values()].filter((list) =>
      list.some((o) => o.instancePath === u.instancePath && isTypeMismatch(o, at)),
    );
    const rightType = [...byBranch.values()].filter((list) => !wrongType.includes(list));
    // Only literals of the right type left (`true` where `false` is allowed): the whole union says
    // more, unless the value is a near miss of one of them (`"fss"` for `"fs"`): that branch was
    // clearly meant, and the other forms would bury the one line that says what to fix.
    const literals = rightType.flat();
    const onlyLiterals = literals.every((o) => o.instancePath === u.instancePath && isLiteralError(o));
    if (wrongType.length === 0 || rightType.length === 0 || (onlyLiterals && !isNearMiss(at, literals, spent)))
      continue;
    for (const o of wrongType.flat()) drop.add(o);
    if (literalsOf(u, errors).length === 0) drop.add(u);
  }
  return drop;
}

function isLiteralError(e: SchemaError): boolean {
  return e.keyword === 'const' || e.keyword === 'enum';
}

/** `at` is a string one of the literals `errors` allow most likely meant. */
function isNearMiss(at: unknown, errors: readonly SchemaError[], spent: SuggestionBudget): boolean {
  if (typeof at !== 'string') return false;
  const allowed = errors.flatMap((e) =>
    e.keyword === 'enum' && Array.isArray(e.params.allowedValues) ? e.params.allowedValues : [e.params.allowedValue],
  );
  return (
    nearest(
      at,
      allowed.filter((v): v is string => typeof v === 'string'),
      spent,
    ) !== undefined
  );
}

/** `e` says the value `at` (where `e` is) has a type the schema does not take at all. */
function isTypeMismatch(e: SchemaError, at: unknown): boolean {
  if (e.keyword === 'type') return true;
  const allowed =
    e.keyword === 'enum' ? e.params.allowedValues : e.keyword === 'const' ? [e.params.allowedValue] : undefined;
  return Array.isArray(allowed) && !allowed.some((v) => typeOf(v) === typeOf(at));
}

function typeOf(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

/** The errors of the direct branches of the failed `anyOf` `u`. */
function branchesOf(u: SchemaError, errors: readonly SchemaError[]): SchemaError[] {
  const prefix = `${u.schemaPath}/anyOf/`;
  return errors.filter(
    (o) =>
      u.schemaPath !== undefined &&
      o.instancePath === u.instancePath &&
      o.schemaPath?.startsWith(prefix) === true &&
      /^\d+$/.test(o.schemaPath.slice(prefix.length)),
  );
}

/** When every branch of the failed union `u` is a literal: their values. */
function literalsOf(u: SchemaError, errors: readonly SchemaError[]): unknown[] {
  const branches = branchesOf(u, errors);
  return branches.length && branches.every((b) => b.keyword === 'const')
    ? branches.map((b) => b.params.allowedValue)
    : [];
}

/** A `const` error that a union of literals (reported as one list) already covers. */
function isLiteralBranch(e: SchemaError, errors: readonly SchemaError[]): boolean {
  return errors.some(
    (u) => u.keyword === 'anyOf' && branchesOf(u, errors).includes(e) && literalsOf(u, errors).length > 0,
  );
}

/**
 * The keys sent beside a missing required one that are not declared and are near it, each with
 * the required key it most likely was. Keys an `additionalProperties` error already names are left
 * to it.
 */
function misspeltRequired(
  e: SchemaError,
  value: unknown,
  schema: unknown,
  unknownKeys: ReadonlySet<string>,
  spent: SuggestionBudget,
): [key: string, meant: string][] {
  const missing = e.params.requiredProperties;
  const at = valueAt(value, segments(e.instancePath));
  if (!Array.isArray(missing) || !at || typeof at !== 'object' || Array.isArray(at)) return [];
  const known = propertiesAt(schema, e.schemaPath);
  const out: [string, string][] = [];
  for (const key of Object.keys(at)) {
    if (Object.hasOwn(known, key) || unknownKeys.has(`${e.instancePath}/${escapeSegment(key)}`)) continue;
    const meant = nearest(key, missing as string[], spent);
    if (meant !== undefined) out.push([key, meant]);
  }
  return out;
}

/** The `properties` of the subschema at `schemaPath` (`#/properties/a`), or none. */
function propertiesAt(schema: unknown, schemaPath = '#'): Record<string, unknown> {
  const at = valueAt(schema, segments(schemaPath.replace(/^#/, ''))) as { properties?: unknown } | undefined;
  const properties = at && typeof at === 'object' ? at.properties : undefined;
  return properties && typeof properties === 'object' ? (properties as Record<string, unknown>) : {};
}

/** `must be one of …`, with the allowed string a misspelt one most likely meant (`proces` → `process`). */
function oneOf(allowed: readonly unknown[], given: unknown, spent: SuggestionBudget): string {
  const list = `must be one of ${allowed.map(describeValue).join(', ')}`;
  const near =
    typeof given === 'string'
      ? nearest(
          given,
          allowed.filter((v): v is string => typeof v === 'string'),
          spent,
        )
      : undefined;
  return near === undefined ? list : `${list} (did you mean "${near}"?)`;
}

/**
 * Letters one explanation may compare suggesting what a typo meant (each pair of texts costs the
 * product of their lengths): the input is the model's, and 2,000 keys sent beside 400 missing
 * ones, or one key of 100,000 characters, held the host's thread for seconds. Past it, a key or
 * value is named without a suggestion. A few typos against a hundred names cost well under it.
 */
const MAX_SUGGESTION_CELLS = 4_000_000;
/** A text past this length is no typo of a name: it gets no suggestion, and costs no comparison. */
const MAX_SUGGESTED_CHARS = 128;

/** What is left of MAX_SUGGESTION_CELLS for one explanation. */
export interface SuggestionBudget {
  cells: number;
}

/** The known key a typo most likely meant: at most a third of its letters off (one at least). */
export function nearest(
  key: string,
  known: readonly string[],
  spent: SuggestionBudget = { cells: MAX_SUGGESTION_CELLS },
): string | undefined {
  if (key.length > MAX_SUGGESTED_CHARS) return undefined;
  const budget = Math.max(1, Math.floor(key.length / 3));
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    // The distance is at least the difference in length: no table needed to rule a name out.
    if (Math.abs(name.length - key.length) > budget) continue;
    const cells = key.length * name.length;
    if (cells > spent.cells) break;
    spent.cells -= cells;
    const distance = editDistance(key.toLowerCase(), name.toLowerCase());
    if (distance <= budget && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit (`polciy` → `policy`). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** A `regex` format error that came from its budget (linear-regex.ts), not from an invalid regex. */
function isCostlyRegex(e: SchemaError, value: unknown): boolean {
  const text = valueAt(value, segments(e.instancePath));
  return typeof text === 'string' && regexFormatCost(text) > REGEX_FORMAT_BUDGET;
}

/** A pattern error that came from the length budget of a linear schema pattern, not from a mismatch. */
function isTooLong(e: SchemaError, value: unknown): boolean {
  const limit = patternTextLimit(e.params.pattern);
  const text = valueAt(value, segments(e.instancePath));
  return limit !== undefined && typeof text === 'string' && text.length > limit;
}

function describeValue(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
