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
 */
import type { TSchema } from 'typebox';
import { compileLinear } from './schema-patterns.ts';
import { compileSchema, type SchemaValidator } from './schema-validator.ts';

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

const validators = new SchemaCache<SchemaValidator>();

/**
 * The compiled validator of `schema` (its regexes made linear: schema-patterns.ts), compiled once
 * per schema text. `linear` is that rewrite when the caller has it already (the contract check).
 */
export function validatorFor(schema: unknown, linear?: unknown, key = schemaKey(schema)): SchemaValidator {
  return (
    validators.get(key) ??
    validators.set(key, linear === undefined ? compileLinear(schema) : compileSchema(linear as TSchema))
  );
}
