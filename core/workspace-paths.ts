/**
 * A tool input field that names a file in the workspace is rewritten, before the policy reads it,
 * to the path the file has: relative to the workspace root, without `.`, `..` or empty segments,
 * through no symlink (the existing part resolved by the system's realpath). The policy, the audit and the tool then see one path, the
 * one the tool acts on. Before, a rule read the path as written: docs/policy.md's own CI sample
 * (allow `write` where `path` is `(build|dist)/.*`) let `build/../src/x` through, and a deny on
 * `\.env` missed `./.env`, `sub/../.env`, the absolute path and a symlink to it.
 *
 * A tool marks such a field in its input schema: a top-level property with `"x-workspace-path":
 * true` (the fs tools' `path`; docs/plugins.md). A path that lands outside the workspace, or that
 * holds what a path may not (a NUL byte, a leading `~`), is left as written: the tool refuses it. A
 * path of PATH_MAX bytes or more, as written or once made absolute, refuses the call.
 * A call someone was asked about has its paths rewritten again after the answer, and is refused
 * when one names another file (`movedPath`). What stays open: a path changed on disk in the
 * moments between the last rewrite and the tool's own walk (plugins/fs/confine.ts checks the path
 * again, and still refuses an escape from the workspace).
 */
import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** The schema keyword that marks a top-level input property as a path in the workspace. */
export const WORKSPACE_PATH = 'x-workspace-path';

/** The top-level properties `schema` marks as workspace paths. */
export function workspacePathFields(schema: unknown): readonly string[] {
  const properties = (schema as { properties?: unknown } | null)?.properties;
  if (properties === null || typeof properties !== 'object') return [];
  return Object.entries(properties)
    .filter(([, sub]) => (sub as Record<string, unknown> | null)?.[WORKSPACE_PATH] === true)
    .map(([name]) => name);
}

/**
 * `schema` as models and MCP clients see it: the marks are the host's own, and a strict provider
 * (Gemini's OpenAI-compatible endpoint among them) refuses a schema keyword it does not know.
 */
export function withoutPathMarks(schema: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  if (fields.length === 0) return schema;
  const properties = { ...(schema.properties as Record<string, Record<string, unknown>>) };
  for (const field of fields) {
    const { [WORKSPACE_PATH]: _, ...unmarked } = properties[field]!;
    properties[field] = unmarked;
  }
  return { ...schema, properties };
}

/**
 * Rewrites each of `fields` in `input` (the dispatcher's own copy) that is a string to the path it
 * names. Returns why the input is refused when a path is too long for the system to resolve: left
 * as written, a policy rule would read text the tool resolves elsewhere (`build/` and then
 * `../` enough times), and a tool whose schema sets no maxLength would get it.
 */
export function canonicalPaths(input: unknown, fields: readonly string[], root: string): string | undefined {
  for (const [record, field, path] of pathsIn(input, fields)) {
    const canonical = canonicalPath(path, root);
    if (canonical === undefined)
      return `/${field}: a path must be under ${PATH_MAX} bytes (PATH_MAX) as written and once made absolute in the workspace; this one is ${Buffer.byteLength(path)} bytes as written`;
    record[field] = canonical;
  }
  return undefined;
}

/**
 * The first of `fields` in `input` (as canonicalPaths left it) that names another file now, and
 * what it names. Asked again after an approval, which can take minutes: a directory on the path
 * swapped for a symlink meanwhile sent the tool where no rule lets it go.
 */
export function movedPath(
  input: unknown,
  fields: readonly string[],
  root: string,
): { was: string; now: string } | undefined {
  for (const [, , was] of pathsIn(input, fields)) {
    const now = canonicalPath(was, root) ?? was;
    if (now !== was) return { was, now };
  }
  return undefined;
}

function* pathsIn(input: unknown, fields: readonly string[]): Generator<[Record<string, unknown>, string, string]> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return;
  const record = input as Record<string, unknown>;
  for (const field of fields) {
    const path = record[field];
    if (typeof path === 'string' && Object.hasOwn(record, field)) yield [record, field, path];
  }
}

/**
 * Linux's PATH_MAX, with its NUL: no system call takes a longer path, `..` included. Checked before
 * anything reads the path, and before the schema's maxLength: walking up a text the size of the
 * input, a realpath and a dirname of all of it per segment, held the host's thread 2.8 s for 80 KB,
 * and path.resolve takes 0.65 s for 4 MB (limits.maxInputChars lets 10 MiB in).
 */
const PATH_MAX = 4096;

/** `path` as the workspace-relative real path, as written when it is outside or not a path, `undefined` when too long. */
function canonicalPath(path: string, root: string): string | undefined {
  if (Buffer.byteLength(path) >= PATH_MAX) return undefined;
  if (path === '' || path.includes('\0') || path.startsWith('~')) return path;
  const realRoot = realOrUndefined(root);
  if (realRoot === undefined) return path;
  // `..` is taken lexically first, as the tools take it (confine.ts): the tool gets this path, so
  // the two agree whatever a symlink before a `..` points to.
  let existing = resolve(realRoot, path);
  if (Buffer.byteLength(existing) >= PATH_MAX) return undefined;
  const missing: string[] = [];
  let real = realOrUndefined(existing);
  while (real === undefined) {
    const parent = dirname(existing);
    if (parent === existing) return path;
    missing.unshift(basename(existing));
    existing = parent;
    real = realOrUndefined(existing);
  }
  const rel = relative(realRoot, join(real, ...missing));
  if (rel === '') return '.';
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return path;
  return sep === '/' ? rel : rel.split(sep).join('/');
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}
