/**
 * Validator errors as one problem per line, for people and for models: unknown keys named, the
 * duplicate `boolean` ("schema is false") errors dropped, and a union's catch-all dropped when a
 * branch said something more specific. Config errors, plugin options and tool input all use it.
 */
import { escapeSegment, segments, valueAt } from './json-pointer.ts';
import { patternTextLimit } from './linear-regex.ts';

export interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

export interface SchemaProblem {
  /** JSON pointer to the value concerned ('' for the root). */
  pointer: string;
  message: string;
}

export function schemaProblems(errors: readonly SchemaError[], value: unknown): SchemaProblem[] {
  const seen = new Set<string>();
  const out: SchemaProblem[] = [];
  const add = (pointer: string, message: string) => {
    const key = `${pointer}\u0000${message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push({ pointer, message });
    }
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
  for (const e of errors) {
    if (e.keyword === 'boolean' && unknownKeys.has(e.instancePath)) continue; // restates the unknown key below
    if (e.keyword === 'anyOf' && errors.some((o) => o !== e && o.instancePath.startsWith(`${e.instancePath}/`)))
      continue;
    if (e.keyword === 'additionalProperties') {
      for (const key of (e.params.additionalProperties as string[] | undefined) ?? [])
        add(`${e.instancePath}/${escapeSegment(key)}`, 'unknown key');
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
    } else {
      add(e.instancePath, e.message);
    }
  }
  return out;
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
