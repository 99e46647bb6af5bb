/**
 * The user's own cache of the host: `$RH_CACHE_DIR`, else `$XDG_CACHE_HOME/rousseau-host`, else
 * `~/.cache/rousseau-host`, else a folder of the user's in the temp dir; never the workspace. What it
 * holds is run as code (TypeScript stripped of its types, V8's compiled code), so a folder that is a
 * symlink, belongs to another user, or that others can write to turns a cache off for that run
 * rather than being trusted; so does `RH_CACHE_DIR=false` (docs/plugins.md, "How a plugin is loaded").
 */

import { lstatSync, mkdirSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/** `<root>/<name>`, made if missing (owner only), or `undefined` when it is not the user's alone. */
export function userCacheDir(name: string): string | undefined {
  const root = cacheRoot();
  if (root === undefined || !ownDirectory(root)) return undefined;
  const dir = join(root, name);
  return ownDirectory(dir) ? dir : undefined;
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

function cacheRoot(): string | undefined {
  const chosen = process.env.RH_CACHE_DIR;
  if (chosen === 'false') return undefined;
  if (chosen) return resolve(chosen);
  // Relative paths are ignored, as the XDG spec says: one would be resolved in the workspace.
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'rousseau-host');
  let home = '';
  try {
    home = homedir();
  } catch {
    // no home directory: the temp dir below
  }
  if (isAbsolute(home)) return join(home, '.cache', 'rousseau-host');
  return join(tmpdir(), `rousseau-host-${process.getuid?.() ?? 'user'}`);
}

/** Whether `path` is (made if missing) a real directory of this user's that no one else can write to. */
function ownDirectory(path: string): boolean {
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
    const stat = lstatSync(path);
    if (!stat.isDirectory()) return false; // a symlink, or a file
    if ((stat.mode & 0o022) !== 0) return false;
    const uid = process.getuid?.();
    return uid === undefined || stat.uid === uid;
  } catch {
    return false;
  }
}
