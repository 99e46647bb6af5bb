/**
 * TypeScript stripped once per version of a file. Stripping types (a WebAssembly build of swc) is
 * most of what Node's own import of a TypeScript plugin costs: 100 generated plugins import in
 * ~230 ms as `.ts` and in ~85 ms as the same files already stripped. So the host keeps what Node's
 * stripper made of each file, by a hash of the file's text, and its load hook hands that to Node's
 * loader as JavaScript: a plugin unchanged since the last start is not stripped again. Stripping
 * keeps every line and column where it was, so a throw's place in the plugin reads the same.
 *
 * The cache is a folder of the user's own cache (core/user-cache.ts: never the workspace, and off
 * where anyone else could write to it or swap it), one per Node version; its files are run as code,
 * so a kept file is served only when it is this user's, no one else's to write, and whole
 * (docs/plugins.md, "How a plugin is loaded").
 */

import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import * as nodeModule from 'node:module';
import { dirname, join } from 'node:path';
import { onlyTheUserWrites, userCacheDir } from '../user-cache.ts';

/** `node:module`'s stripper (Node ≥ 22.13), beyond the Node 20 typings. */
const strip = (nodeModule as { stripTypeScriptTypes?: (code: string, options: { mode: 'strip' }) => string })
  .stripTypeScriptTypes;

/**
 * The stripped text of a TypeScript module whose text is `source`: from the cache, or stripped now
 * (and kept). `undefined` when there is no cache or Node's stripper refuses the text: Node's loader
 * then strips it itself, and says what it refused.
 */
export function strippedSource(source: string | ArrayBufferView | ArrayBuffer): string | undefined {
  const dir = cacheDir();
  if (dir === undefined) return undefined;
  // A view of Node's bytes, not a copy.
  const bytes =
    typeof source === 'string'
      ? Buffer.from(source)
      : ArrayBuffer.isView(source)
        ? Buffer.from(source.buffer, source.byteOffset, source.byteLength)
        : Buffer.from(source);
  const file = join(dir, `${process.getBuiltinModule('node:crypto').hash('sha256', bytes, 'hex')}.js`);
  const length = strippedLength(bytes);
  const kept = readKept(file, length);
  if (kept !== undefined) return kept;
  const stripped = stripQuietly(typeof source === 'string' ? source : bytes.toString('utf8'));
  // Text that is not valid UTF-8 strips to another length; it is stripped at each start instead.
  if (stripped !== undefined && Buffer.byteLength(stripped) === length) keep(file, stripped);
  return stripped;
}

/**
 * How many bytes the stripped text of `bytes` has: as many, since the stripper blanks each type out
 * with characters of the same UTF-8 width (every line and column stays where it was), less a leading
 * BOM, which it drops. A kept file of another size is not all of the stripped text (a write cut
 * short by a crash or a full disk), so it is not served.
 */
function strippedLength(bytes: Uint8Array): number {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.length - 3 : bytes.length;
}

/**
 * The text kept at `file`, when it is a whole regular file of this user's that no one else can write
 * to; the checks are made on the file opened, so what was checked is what is read. O_NOFOLLOW: not
 * through a symlink; O_NONBLOCK: a FIFO put there does not hang the load.
 */
function readKept(file: string, length: number): string | undefined {
  // Asked first rather than opened and caught: a first start misses every file, and each throw
  // (an error with its stack) costs more than the question.
  if (!existsSync(file)) return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    return stat.isFile() && stat.size === length && onlyTheUserWrites(stat) ? readFileSync(fd, 'utf8') : undefined;
  } catch {
    return undefined; // stripped again, and written over
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Stripped texts not written yet. Creating a file costs the thread ~0.15 ms (a journalling file
 * system), 6% of a first start's load of 100 plugins, so they are written once the imports have
 * stopped coming for a moment (the host is then loaded and waiting), or as the process exits. A
 * worker thread ended before its timer fired (terminated) leaves them unwritten: they are stripped
 * again next time (an isolate imports TypeScript through jiti; only a `.ts` file imported by a
 * JavaScript plugin there comes here).
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
 * Each file written whole under a name of this thread's, then renamed, so another host starting at
 * the same moment reads the old file or the new one, never half of one. `wx`: never written through
 * whatever already has that name (a symlink, a crashed write's leftover). A failure (a full disk, a
 * read-only cache) leaves that file to be stripped again next time.
 */
function writeKept(): void {
  clearTimeout(writeTimer);
  writeTimer = undefined;
  process.off('exit', writeKept);
  for (const { file, text } of unwritten.splice(0)) {
    prune(dirname(file));
    // Taken here, not imported: on Node 20 this module loads and never writes, and the host's
    // thread of an inline-only host has no other use for `node:worker_threads`.
    const { threadId } = process.getBuiltinModule('node:worker_threads');
    const partial = `${file}.${process.pid}-${threadId}`;
    try {
      writeFileSync(partial, text, { mode: 0o600, flag: 'wx' });
      renameSync(partial, file);
    } catch {
      try {
        rmSync(partial, { force: true });
      } catch {
        // a directory by that name: pruned in time
      }
    }
  }
}

/** Kept files per Node version at most: past that, the oldest written go, down to three quarters. */
const MOST_KEPT = 1000;
/** A folder of another Node version not written to for this long is removed. */
const UNUSED_VERSION_MS = 30 * 86_400_000;
/** The names this cache writes in a version's folder: a SHA-256, and a write of one under way. */
const KEPT_NAME = /^[0-9a-f]{64}\.js(\.\d+-\d+)?$/;
/** A version's folder in the cache root, as `cacheDir` names it. */
const VERSION_PREFIX = 'ts-';
const VERSION_FOLDER = new RegExp(`^${VERSION_PREFIX}v\\d+\\.\\d+\\.\\d+$`);
let pruned = false;

/**
 * Bounds the cache, once per thread and only on a start that writes to it: an edited plugin leaves
 * its old versions behind (a watched one, one per save), a Node upgrade its old folder. Age is the
 * time a file was written; a file still in use that goes is stripped and kept again. Only what this
 * cache wrote goes: its own files, and a version folder once emptied of them (`RH_CACHE_DIR` may
 * name a folder that holds other things).
 */
function prune(dir: string): void {
  if (pruned) return;
  pruned = true;
  try {
    const root = dirname(dir);
    for (const name of readdirSync(root)) {
      const path = join(root, name);
      if (!VERSION_FOLDER.test(name) || path === dir) continue;
      try {
        const stat = lstatSync(path);
        if (stat.isDirectory() && onlyTheUserWrites(stat) && Date.now() - stat.mtimeMs > UNUSED_VERSION_MS) {
          removeKept(
            path,
            readdirSync(path).filter((file) => KEPT_NAME.test(file)),
          );
          rmdirSync(path);
        }
      } catch {
        // something else in it, or another host removing it too: it stays
      }
    }
    const names = readdirSync(dir).filter((name) => KEPT_NAME.test(name));
    if (names.length < MOST_KEPT) return;
    const byAge = names
      .map((name) => ({ name, written: lstatSync(join(dir, name)).mtimeMs }))
      .sort((a, b) => a.written - b.written);
    removeKept(
      dir,
      byAge.slice(0, names.length - (MOST_KEPT * 3) / 4).map(({ name }) => name),
    );
  } catch {
    // another host pruning at the same moment: the rest waits for a later start
  }
}

function removeKept(dir: string, names: string[]): void {
  for (const name of names) rmSync(join(dir, name), { force: true });
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
  // Node's own word for what it does to TypeScript, however it was asked (`--experimental-transform-types`
  // in NODE_OPTIONS, quoted, `=true`): transformed (enums and all) is not what the stripper makes.
  if (dir === null)
    dir =
      strip && (process.features as { typescript?: unknown }).typescript === 'strip'
        ? userCacheDir(`${VERSION_PREFIX}${process.version}`)
        : undefined;
  return dir;
}
