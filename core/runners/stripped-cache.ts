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
 * write to or swap (any folder above it), or a symlink, turns the cache off instead, and a kept file
 * is served only when it is this user's, no one else's to write, and whole (docs/plugins.md, "How a
 * plugin is loaded").
 */

import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  type Stats,
  writeFileSync,
} from 'node:fs';
import * as nodeModule from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, normalize } from 'node:path';
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
  const bytes = typeof source === 'string' ? Buffer.from(source) : source;
  const file = join(dir, `${process.getBuiltinModule('node:crypto').hash('sha256', bytes, 'hex')}.js`);
  const length = strippedLength(bytes);
  const kept = readKept(file, length);
  if (kept !== undefined) return kept;
  const stripped = stripQuietly(typeof source === 'string' ? source : Buffer.from(source).toString('utf8'));
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
 * Keeps `stripped` at `file`: written whole under a name of this thread's, then renamed, so another
 * host starting at the same moment reads the old file or the new one, never half of one. `wx`: never
 * written through whatever already has that name (a symlink, a crashed write's leftover).
 */
function keep(file: string, stripped: string): void {
  prune(dirname(file));
  const partial = `${file}.${process.pid}-${threadId}`;
  try {
    writeFileSync(partial, stripped, { mode: 0o600, flag: 'wx' });
    renameSync(partial, file);
  } catch {
    // A full disk or a read-only cache: the plugin loads all the same.
    try {
      rmSync(partial, { force: true });
    } catch {
      // a directory by that name: pruned in time
    }
  }
}

/** Kept files per Node version at most: past that, the oldest written go, down to three quarters. */
const MOST_KEPT = 1000;
/** A folder of another Node version not written to for this long is removed. */
const UNUSED_VERSION_MS = 30 * 86_400_000;
/** The names this cache writes in a version's folder: a SHA-256, and a write of one under way. */
const KEPT_NAME = /^[0-9a-f]{64}\.js(\.\d+-\d+)?$/;
let pruned = false;

/**
 * Bounds the cache, once per thread and only on a start that writes to it: an edited plugin leaves
 * its old versions behind (a watched one, one per save), a Node upgrade its old folder. Age is the
 * time a file was written; a file still in use that goes is stripped and kept again.
 */
function prune(dir: string): void {
  if (pruned) return;
  pruned = true;
  try {
    const root = dirname(dir);
    for (const name of readdirSync(root)) {
      const path = join(root, name);
      if (name.startsWith('ts-v') && path !== dir && Date.now() - lstatSync(path).mtimeMs > UNUSED_VERSION_MS)
        rmSync(path, { recursive: true, force: true });
    }
    const names = readdirSync(dir).filter((name) => KEPT_NAME.test(name));
    if (names.length < MOST_KEPT) return;
    const byAge = names
      .map((name) => ({ path: join(dir, name), written: lstatSync(join(dir, name)).mtimeMs }))
      .sort((a, b) => a.written - b.written);
    for (const { path } of byAge.slice(0, names.length - (MOST_KEPT * 3) / 4))
      rmSync(path, { recursive: true, force: true });
  } catch {
    // another host pruning at the same moment: the rest waits for a later start
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
  // Node's own word for what it does to TypeScript, however it was asked (`--experimental-transform-types`
  // in NODE_OPTIONS, quoted, `=true`): transformed (enums and all) is not what the stripper makes.
  if (!strip || (process.features as { typescript?: unknown }).typescript !== 'strip') return dir;
  if (process.env.RH_TS_CACHE === 'false') return dir;
  // A relative path ($HOME=., XDG_CACHE_HOME=.cache) is a folder of the workspace: a repository's
  // files are the user's once cloned, so a kept file it ships would pass every check below.
  const named = cacheRoot();
  if (!isAbsolute(named)) return dir;
  // `..` taken out as text, so that the folders walked above it are the ones the path goes through.
  const chosen = normalize(named);
  const root = ownDirectory(chosen);
  // Above the root as named (whoever can write to the folder of a symlink on the way can point it
  // elsewhere) and as it resolved.
  if (root && unswappable(dirname(chosen)) && unswappable(dirname(root)))
    dir = ownDirectory(join(root, `ts-${process.version}`));
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

const uid = process.getuid?.();

/** Whether a file or directory is this user's and no one else can write to it. */
function onlyTheUserWrites(stat: Stats): boolean {
  return (stat.mode & 0o022) === 0 && (uid === undefined || stat.uid === uid);
}

/**
 * `path`, made if missing (readable by its owner only), when it is a directory (not a symlink) of
 * this user's that no one else can write to: its real path, so that what is checked above it is
 * what each later file's path goes through. `undefined` otherwise.
 */
function ownDirectory(path: string): string | undefined {
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
    const stat = lstatSync(path);
    return stat.isDirectory() && onlyTheUserWrites(stat) ? realpathSync(path) : undefined;
  } catch {
    return undefined;
  }
}

/** The sticky bit (S_ISVTX), which `fs.constants` does not name. */
const STICKY = 0o1000;

/**
 * Whether `dir` and every folder (or symlink) above it are this user's or root's, and no folder can
 * be written to by anyone else unless sticky (as /tmp is: there only an entry's owner may rename it): whoever could
 * write to one could move the cache away, after it was checked, and put their own in its place.
 */
function unswappable(dir: string): boolean {
  for (let up = dir; ; up = dirname(up)) {
    try {
      const stat = lstatSync(up);
      if (uid !== undefined && stat.uid !== uid && stat.uid !== 0) return false;
      // A symlink's own mode means nothing (0777 on Linux): the folder it is in, checked next, says
      // who could replace it.
      if (!stat.isSymbolicLink() && (stat.mode & 0o022) !== 0 && (stat.mode & STICKY) === 0) return false;
    } catch {
      return false;
    }
    if (dirname(up) === up) return true;
  }
}
