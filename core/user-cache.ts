/**
 * The user's own cache of the host: `$RH_CACHE_DIR`, else `$XDG_CACHE_HOME/rousseau-host`, else
 * `~/.cache/rousseau-host`, else a folder of the user's in the temp dir; never the workspace. What it
 * holds is run as code (TypeScript stripped of its types, V8's compiled code), so a cache another
 * user could write to or swap turns off for that run rather than being trusted: a relative path (a
 * folder of the workspace, whose files a cloned repository chose), a folder that is a symlink, is
 * another user's or that others can write to, or any folder above it that someone else could write
 * to; so does `RH_CACHE_DIR=false`, and so it is on Windows (docs/plugins.md, "How a plugin is
 * loaded"). An absolute path the user set into a workspace (an `.envrc`) is the user's choice.
 */

import { lstatSync, mkdirSync, realpathSync, type Stats } from 'node:fs';
import * as nodeModule from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, normalize } from 'node:path';

/**
 * `<root>/<name>`, made if missing (owner only), as its real path, or `undefined` when it is not the
 * user's alone. Asked once per thread and name by its callers: it walks every folder above.
 */
export function userCacheDir(name: string): string | undefined {
  // Windows reports every writable folder as writable by all (mode 0o666): nothing here can tell
  // the user's own from anyone's, so there is no cache there.
  if (process.platform === 'win32') return undefined;
  const named = cacheRoot();
  // Checked once, on whatever the root came from (`TMPDIR=.` too): a relative one is in the workspace.
  if (named === undefined || !isAbsolute(named)) return undefined;
  // `..` taken out as text, so that the folders walked above it are the ones the path goes through.
  const chosen = normalize(named);
  const root = ownDirectory(chosen);
  // Above the root as named (whoever can write to the folder of a symlink on the way can point it
  // elsewhere) and as it resolved.
  if (!root || !unswappable(dirname(chosen)) || !unswappable(dirname(root))) return undefined;
  return ownDirectory(join(root, name));
}

/**
 * Turns on Node's compile cache (Node ≥ 22.1) in the user's cache: a process of the CLI then
 * compiles the host's ~1.8 MB of JavaScript (and its plugins') once per version instead of at every
 * start. For the CLI only, before it imports its bundle: a library would turn it on for the
 * process that embeds it. Node keeps one folder per Node version inside it.
 */
export function enableCompileCache(): void {
  const enable = (nodeModule as { enableCompileCache?: (dir: string) => unknown }).enableCompileCache;
  if (!enable || process.env.NODE_COMPILE_CACHE !== undefined) return; // the user's own choice stands
  const dir = userCacheDir('v8');
  if (dir === undefined) return;
  try {
    enable(dir);
  } catch {
    // a cache Node cannot open: the CLI runs as it would without one
  }
}

/** Where the cache is, as the user said it; `undefined` for none. */
function cacheRoot(): string | undefined {
  const chosen = process.env.RH_CACHE_DIR;
  if (chosen === 'false') return undefined;
  if (chosen) return chosen;
  // A relative one is ignored, as the XDG spec says.
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'rousseau-host');
  let home = '';
  try {
    home = homedir();
  } catch {
    // no home directory: the temp dir below
  }
  return home ? join(home, '.cache', 'rousseau-host') : join(tmpdir(), `rousseau-host-${uid}`);
}

const uid = process.getuid?.();

/** Whether a file or directory is this user's and no one else can write to it. */
export function onlyTheUserWrites(stat: Stats): boolean {
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
 * be written to by anyone else unless sticky (as /tmp is: there only an entry's owner may rename
 * it): whoever could write to one could move the cache away, after it was checked, and put their
 * own in its place.
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
