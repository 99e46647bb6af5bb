/**
 * TypeScript stripped once per version of a file. Stripping types (a WebAssembly build of swc) is
 * most of what Node's own import of a TypeScript plugin costs: 100 generated plugins import in
 * ~230 ms as `.ts` and in ~85 ms as the same files already stripped. So the host keeps what Node's
 * stripper made of each file, by a hash of the file's text, and its load hook hands that to Node's
 * loader as JavaScript: a plugin unchanged since the last start is not stripped again. Stripping
 * keeps every line and column where it was, so a throw's place in the plugin reads the same.
 *
 * The cache is the user's own directory (`RH_TS_CACHE`, else `$XDG_CACHE_HOME` or `~/.cache`, else
 * the temp dir), never the workspace: its files are run as code, so a directory another user could
 * write to, or a symlink, turns the cache off instead (docs/plugins.md, "How a plugin is loaded").
 */

import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';

/** `node:module`'s stripper (Node ≥ 22.13), beyond the Node 20 typings. */
const strip = (nodeModule as { stripTypeScriptTypes?: (code: string, options: { mode: 'strip' }) => string })
  .stripTypeScriptTypes;

/**
 * The stripped text of a TypeScript module whose text is `source`: from the cache, or stripped now
 * (and kept). `undefined` when there is no cache or Node's stripper refuses the text: Node's loader
 * then strips it itself, and says what it refused.
 */
export function strippedSource(source: string | Uint8Array): string | undefined {
  const dir = cacheDir();
  if (dir === undefined) return undefined;
  const file = join(dir, `${process.getBuiltinModule('node:crypto').hash('sha256', source, 'hex')}.js`);
  // Asked first rather than read and caught: a first start misses every file, and each throw
  // (an error with its stack) costs more than the question.
  if (existsSync(file)) {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      // unreadable: stripped again below, and written over
    }
  }
  const stripped = stripQuietly(typeof source === 'string' ? source : Buffer.from(source).toString('utf8'));
  if (stripped === undefined) return undefined;
  keep(file, stripped);
  return stripped;
}

/**
 * Stripped texts not written yet. Creating a file costs the thread ~0.15 ms (a journalling file
 * system), 6% of a first start's load of 100 plugins, so they are written once the imports have
 * stopped coming for a moment (the host is then loaded and waiting), or as the thread exits.
 */
const unwritten: { file: string; text: string }[] = [];
let writeTimer: NodeJS.Timeout | undefined;
const WRITE_AFTER_MS = 50;

function keep(file: string, text: string): void {
  unwritten.push({ file, text });
  if (writeTimer) {
    writeTimer.refresh();
    return;
  }
  writeTimer = setTimeout(writeKept, WRITE_AFTER_MS).unref();
  process.once('exit', writeKept);
}

/**
 * Each file written whole under a name of this thread's, then renamed: another host starting at the
 * same moment reads the old file or the new one, never half of one. A failure (a full disk, a
 * read-only cache) leaves that file to be stripped again next time.
 */
function writeKept(): void {
  clearTimeout(writeTimer);
  writeTimer = undefined;
  process.off('exit', writeKept);
  for (const { file, text } of unwritten.splice(0)) {
    const partial = `${file}.${process.pid}-${threadId}`;
    try {
      writeFileSync(partial, text, { mode: 0o600 });
      renameSync(partial, file);
    } catch {
      rmSync(partial, { force: true });
    }
  }
}

/**
 * Node's stripper, without the warning its first use prints ("stripTypeScriptTypes is an
 * experimental feature"): the user imported a plugin, which Node strips without a word, and the host
 * only does the same step itself. `undefined` when the stripper refuses the text.
 */
function stripQuietly(code: string): string | undefined {
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (!String(warning).includes('stripTypeScriptTypes')) Reflect.apply(emitWarning, process, [warning, ...rest]);
  }) as typeof process.emitWarning;
  try {
    return strip!(code, { mode: 'strip' });
  } catch {
    return undefined;
  } finally {
    process.emitWarning = emitWarning;
  }
}

/** The cache directory of this Node version, once per thread; `undefined` when there is none to trust. */
let dir: string | null | undefined = null;

function cacheDir(): string | undefined {
  if (dir !== null) return dir;
  dir = undefined;
  if (!strip || transformsTypes() || process.env.RH_TS_CACHE === 'false') return dir;
  // The root as well as the directory in it: whoever owns the root could swap the directory.
  const root = ownDirectory(cacheRoot());
  if (root) dir = ownDirectory(join(root, `ts-${process.version}`));
  return dir;
}

function cacheRoot(): string {
  const chosen = process.env.RH_TS_CACHE;
  if (chosen) return chosen;
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg) return join(xdg, 'rousseau-host');
  try {
    return join(homedir(), '.cache', 'rousseau-host');
  } catch {
    return join(tmpdir(), `rousseau-host-${process.getuid?.() ?? 'user'}`);
  }
}

/** Node transforms TypeScript (enums and all) rather than strips it: its output is not the stripper's. */
function transformsTypes(): boolean {
  return [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].includes(
    '--experimental-transform-types',
  );
}

/**
 * `path`, made if missing (readable by its owner only), when it is a directory of this user's that
 * no one else can write to; `undefined` otherwise.
 */
function ownDirectory(path: string): string | undefined {
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
    const stat = lstatSync(path);
    if (!stat.isDirectory()) return undefined; // a symlink, or a file
    if ((stat.mode & 0o022) !== 0) return undefined;
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) return undefined;
    return path;
  } catch {
    return undefined;
  }
}
