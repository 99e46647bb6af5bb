/**
 * The fs plugin's options and their defaults. The host applies the schema's defaults before a call;
 * `limitsOf` applies them again so a tool called directly (tests, embedding) behaves the same.
 */
import Type, { type Static } from 'typebox';
import Value from 'typebox/value';
import { CONFIG_FILES } from '../../core/config-names.ts';

export const FsOptions = Type.Object(
  {
    writeProtected: Type.Array(Type.String({ minLength: 1 }), {
      default: ['.git', '.rousseau', ...new Set(CONFIG_FILES.map((f) => f.slice(f.lastIndexOf('/') + 1)))],
      description:
        "Path components that write and edit refuse anywhere in a path: `.git` internals, the host state directory (audit log) and the host config's file names (the config is code the host runs at its next start: core/config-names.ts).",
    }),
    // The maxima keep every text a tool builds well below V8's longest string (2^29 characters):
    // past it, building the string throws instead of answering.
    readMaxBytes: Type.Integer({
      minimum: 1024,
      maximum: 16 * 1024 * 1024,
      default: 50_000,
      description: 'Most bytes of numbered text one read returns (at most 16 MiB).',
    }),
    maxFileBytes: Type.Integer({
      minimum: 1024,
      maximum: 256 * 1024 * 1024,
      default: 4 * 1024 * 1024,
      description: 'Largest file edit loads and grep searches (grep skips larger ones); at most 256 MiB.',
    }),
    maxResults: Type.Integer({
      minimum: 1,
      default: 200,
      description: 'Most grep matches; glob and ls return at most 5x this.',
    }),
  },
  { additionalProperties: false },
);

export type FsOptions = Static<typeof FsOptions>;

/** The options with the schema's defaults filled in; `options` itself is left as it was. */
export function limitsOf(options: Partial<FsOptions> | undefined): FsOptions {
  return Value.Default(FsOptions, structuredClone(options ?? {})) as FsOptions;
}
