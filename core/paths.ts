/**
 * Where the host's own files are. The host runs either from source (tests, tsx) or bundled into
 * dist/ (the `rousseau-host` bin, the published package); each file it hands to jiti or to a worker
 * has one place in each layout, named here. And how the host opens a file it writes in a workspace
 * (`openHostFile`), whose content it does not control.
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  realpathSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readJsonFile } from './json-text.ts';

/** True when this module runs from its TypeScript source rather than from dist/. */
export const FROM_SOURCE = import.meta.url.endsWith('.ts');

// The nearest package.json named rousseau-host: the published package ships dist/ without core/.
function findRoot(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (packageName(join(dir, 'package.json')) === 'rousseau-host') return dir;
    if (dirname(dir) === dir) throw new Error('rousseau-host: cannot find the package root');
  }
}

function packageName(file: string): unknown {
  try {
    return (readJsonFile(file) as { name?: unknown }).name;
  } catch {
    return undefined; // none here, or not ours to read
  }
}

/** The package's root directory (where package.json is). */
export const PACKAGE_ROOT = findRoot();

/** A file of the host in the layout it runs from: `source` under tsx, `bundled` (in dist/) otherwise. */
export function hostFile(source: string, bundled: string): string {
  return FROM_SOURCE ? join(PACKAGE_ROOT, source) : join(PACKAGE_ROOT, 'dist', bundled);
}

const TYPEBOX_SUBPATHS = ['', '/compile', '/error', '/format', '/guard', '/schema', '/system', '/type', '/value'];

/**
 * What a plugin or a config may import from the host, resolved to the host's own copies (jiti
 * aliases): `rousseau-host` is the contract helpers only, `typebox` the host's typebox.
 */
export function hostAliases(): Record<string, string> {
  const aliases: Record<string, string> = { 'rousseau-host': hostFile('core/contract.ts', 'contract.js') };
  if (FROM_SOURCE) {
    // typebox's exports all carry a `default` condition, so require.resolve finds the same files as import.
    const require = createRequire(import.meta.url);
    for (const sub of TYPEBOX_SUBPATHS) aliases[`typebox${sub}`] = require.resolve(`typebox${sub}`);
  } else {
    // The bundled copy scripts/build.js makes: one file per subpath instead of 373 modules.
    for (const sub of TYPEBOX_SUBPATHS)
      aliases[`typebox${sub}`] = join(PACKAGE_ROOT, 'dist', 'vendor', 'typebox', `${sub.slice(1) || 'index'}.mjs`);
  }
  // The host's own subpath export of typebox, for a plugin that names it: without these the
  // `rousseau-host` alias would take it for a path below contract.js.
  for (const sub of TYPEBOX_SUBPATHS) aliases[`rousseau-host/vendor/typebox${sub}`] = aliases[`typebox${sub}`]!;
  return aliases;
}

/**
 * Opens a file the host writes for appending (its audit trail) or to replace it (the config `init`
 * writes), creating it and its directories.
 * A workspace is not the host's: a cloned repository can hold `.rousseau` or `.rousseau/audit.jsonl`
 * as a symlink, and following it would append to any file the user can write. So for a file in the
 * workspace, no directory between the workspace and the file may be a symlink, the file is opened
 * with O_NOFOLLOW (and O_NONBLOCK: a FIFO there must not hang the host), and the descriptor must be
 * a regular file with one name, still at `file`; anything else throws an error naming the path. A
 * file outside the workspace is where the user's config put it, and is opened as named (a device
 * or a pipe to a collector included). `mode` is the permissions of a file it creates (before umask).
 */
export function openHostFile(
  file: string,
  workspace: string,
  how: 'append' | 'replace' = 'append',
  mode = 0o666,
): number {
  const below = relative(workspace, file);
  if (outside(below)) {
    mkdirSync(dirname(file), { recursive: true });
    return openSync(file, how === 'append' ? 'a' : 'w', mode);
  }
  checkDirectories(workspace, below, true);
  let fd: number;
  try {
    const append = how === 'append' ? constants.O_APPEND : 0;
    fd = openSync(
      file,
      constants.O_WRONLY | append | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      mode,
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP')
      throw new Error(`${file} is a symlink; the host does not follow links to its own files in the workspace`);
    if (code === 'ENXIO') throw new Error(`${file} is not a regular file (a FIFO or socket)`); // a FIFO with no reader
    throw error;
  }
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile()) throw new Error(`${file} is not a regular file`);
    if (opened.nlink !== 1)
      throw new Error(`${file} has ${opened.nlink} hard links; the host appends only to a file of its own`);
    // Where the descriptor really is (Linux): a directory on the way swapped for a symlink after its
    // check would send the open elsewhere, and a second lstat would follow it there too.
    const moved = existsSync('/proc/self/fd')
      ? readlinkSync(`/proc/self/fd/${fd}`) !== join(realpathSync(workspace), below)
      : lstatSync(file).ino !== opened.ino;
    if (moved)
      throw new Error(
        `${file} was replaced, or a directory on its path swapped for a symlink, while it was being opened`,
      );
    // Truncated only now: O_TRUNC at open would have emptied a hard-linked file before the checks.
    if (how === 'replace') ftruncateSync(fd, 0);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * The text of a file the host wrote in the workspace (a saved session), read under the same rules
 * as `openHostFile` writes it: no symlinked directory on the way, no symlink, FIFO or device as the
 * file. A planted link would hand the host (and the model it talks to) a file of the user's choosing
 * that is not the host's, and a FIFO would block the read forever. A missing file throws ENOENT.
 */
export function readHostFile(file: string, workspace: string): string {
  const below = relative(workspace, file);
  if (!outside(below)) checkDirectories(workspace, below, false);
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP')
      throw new Error(`${file} is a symlink; the host does not follow links to its own files in the workspace`);
    throw error;
  }
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${file} is not a regular file`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** `below` (relative to the workspace) is not in it. */
function outside(below: string): boolean {
  return below === '' || below === '..' || below.startsWith(`..${sep}`) || isAbsolute(below);
}

/** Each directory from `workspace` down to `below`'s is a real directory, made first when `make`. */
function checkDirectories(workspace: string, below: string, make: boolean): void {
  let dir = resolve(workspace);
  if (make) mkdirSync(dir, { recursive: true });
  for (const part of dirname(below)
    .split(sep)
    .filter((p) => p !== '.')) {
    dir = join(dir, part);
    if (make) {
      try {
        mkdirSync(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    const stat = lstatSync(dir);
    if (stat.isSymbolicLink())
      throw new Error(`${dir} is a symlink; the host does not follow links to its own files in the workspace`);
    if (!stat.isDirectory()) throw new Error(`${dir} is not a directory`);
  }
}
