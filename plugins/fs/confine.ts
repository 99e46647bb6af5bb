/**
 * Confinement of every file tool to the workspace.
 *
 * A lexical check alone is fooled by symlinks, and "realpath the nearest existing parent" is fooled
 * by a dangling symlink (writeFile then creates its target outside). So the path is walked one
 * component at a time from the real root with `lstat`: each symlink met (in the middle or at the
 * end) is resolved and must stay inside the root; a dangling one is refused. What the walk returns
 * is the real path, which the tools then open with O_NOFOLLOW and check again after opening
 * (`openConfined`), which narrows the race with a concurrent writer to the rename of a directory.
 */
import { constants, existsSync, type Stats } from 'node:fs';
import { lstat, mkdir, open, readlink, realpath, unlink, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { errnoOf, FsToolError } from './errors.ts';

export type Purpose = 'read' | 'write';

export interface Resolved {
  /** The real absolute path (no symlinks left in it); it may not exist yet. */
  real: string;
  /** The real workspace root. */
  root: string;
  /** `real` relative to the root, `.` for the root itself: how results name the path. */
  rel: string;
  /** `lstat` of `real` when it exists. */
  stat?: Stats;
}

/** Whether `path` is `root` or lies below it (never a prefix test: `ROOT-evil` is not inside `ROOT`). */
function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** Resolves `input` (relative to the workspace, or absolute inside it) to a real path inside it, or throws. */
export async function resolveInWorkspace(
  workspace: string,
  input: string,
  purpose: Purpose,
  writeProtected: readonly string[] = [],
): Promise<Resolved> {
  if (input.includes('\0')) throw new FsToolError('invalid_path', `path ${JSON.stringify(input)} contains a NUL byte`);
  if (input.startsWith('~')) {
    throw new FsToolError(
      'invalid_path',
      `path "${input}" starts with "~": home directories are not expanded; give a path relative to the workspace root`,
    );
  }
  const root = await realpath(workspace);
  const rel = lexicalRelative(workspace, root, input);
  if (rel === undefined)
    throw new FsToolError(
      'outside_workspace',
      `path "${input}" is outside the workspace; give a path relative to the workspace root`,
    );

  const parts = rel === '' ? [] : rel.split(sep);
  let current = root;
  let stat: Stats | undefined = await lstat(root);
  for (let i = 0; i < parts.length; i++) {
    const next = join(current, parts[i]!);
    const last = i === parts.length - 1;
    try {
      stat = await lstat(next);
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'ENOENT') {
        // Nothing further exists: the rest is created as plain directories under a real, checked one.
        return finish(join(current, ...parts.slice(i)), root, purpose, writeProtected, input);
      }
      if (code === 'ENOTDIR')
        throw new FsToolError(
          'not_a_directory',
          `path "${input}": "${relative(root, current)}" is a file, not a directory`,
        );
      throw error;
    }
    if (stat.isSymbolicLink()) {
      const target = await followLink(next, root, input, last ? purpose : 'write');
      if (target === undefined) return finish(next, root, purpose, writeProtected, input, undefined);
      current = target;
      stat = await lstat(current);
    } else {
      current = next;
    }
    if (!last && !stat.isDirectory()) {
      throw new FsToolError(
        'not_a_directory',
        `path "${input}": "${relative(root, current)}" is a file, not a directory`,
      );
    }
  }
  return finish(current, root, purpose, writeProtected, input, stat);
}

/**
 * The real target of a symlink met during the walk, checked to be inside the root. A dangling link
 * is refused for writes (writing would create its target, possibly outside) and when it sits in the
 * middle of a path; a read of a dangling last component is "not found" (`undefined`).
 */
async function followLink(link: string, root: string, input: string, purpose: Purpose): Promise<string | undefined> {
  let target: string;
  try {
    target = await realpath(link);
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ENOENT') {
      if (purpose === 'read') return undefined;
      throw new FsToolError(
        'dangling_symlink',
        `path "${input}": "${relative(root, link)}" is a symlink to a missing target; refusing to create it`,
      );
    }
    if (code === 'ELOOP')
      throw new FsToolError('invalid_path', `path "${input}": "${relative(root, link)}" is a symlink loop`);
    throw error;
  }
  if (!isInside(root, target)) {
    throw new FsToolError(
      'symlink_escape',
      `path "${input}" leads out of the workspace through the symlink "${relative(root, link)}"`,
    );
  }
  return target;
}

function finish(
  real: string,
  root: string,
  purpose: Purpose,
  writeProtected: readonly string[],
  input: string,
  stat?: Stats,
): Resolved {
  const rel = relative(root, real) || '.';
  if (purpose === 'write') {
    const hit = rel.split(sep).find((part) => writeProtected.includes(part));
    if (hit)
      throw new FsToolError('write_protected', `path "${input}" is inside "${hit}", which file tools may not change`);
  }
  return { real, root, rel, ...(stat ? { stat } : {}) };
}

/**
 * `input` relative to the real root, or `undefined` when it lies outside. Absolute paths are taken
 * in either spelling of the root (as configured, or with its symlinks resolved).
 */
function lexicalRelative(workspace: string, root: string, input: string): string | undefined {
  const bases = isAbsolute(input) ? [root, resolve(workspace)] : [root];
  for (const base of bases) {
    const rel = relative(base, resolve(base, input));
    if (isInside(base, resolve(base, input))) return rel;
  }
  return undefined;
}

const OPEN_FLAGS = {
  read: constants.O_RDONLY | constants.O_NONBLOCK,
  write: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
  dir: constants.O_RDONLY | constants.O_DIRECTORY,
};

/** Linux names every open descriptor under /proc/self/fd; without it (macOS) the walk's check stands alone. */
const PROC_FD = existsSync('/proc/self/fd');

/**
 * Opens a path returned by `resolveInWorkspace` (or found by walking a confined directory) without
 * following a final symlink (O_NOFOLLOW) and without blocking on a FIFO (O_NONBLOCK), then asks the
 * kernel where the descriptor really points (`/proc/self/fd`): if a directory was swapped for a
 * symlink since the walk, it is refused, and a file this call created out there is removed. This is
 * the one place the fs tools open anything. `path` may be bytes: a name need not be UTF-8.
 */
export async function openConfined(
  path: string | Buffer,
  root: string,
  mode: keyof typeof OPEN_FLAGS,
  fileMode = 0o666,
): Promise<FileHandle> {
  const shown = relative(root, path.toString());
  let handle: FileHandle;
  try {
    handle = await open(path, OPEN_FLAGS[mode] | constants.O_NOFOLLOW, fileMode);
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ELOOP')
      throw new FsToolError('symlink_escape', `"${shown}" became a symlink while it was being opened`);
    if (code === 'ENOENT') throw new FsToolError('not_found', `"${shown}" does not exist`);
    if (code === 'ENOTDIR' && mode === 'dir')
      throw new FsToolError(
        'not_a_directory',
        `"${shown}" is not a directory (or became a symlink while it was being opened)`,
      );
    throw error;
  }
  if (!PROC_FD) return handle;
  try {
    const opened = await readlink(fdPath(handle));
    if (isInside(root, opened)) return handle;
    if (mode === 'write') await unlink(opened).catch(() => {});
  } catch (error) {
    await handle.close();
    throw error;
  }
  await handle.close();
  throw new FsToolError(
    'symlink_escape',
    `"${shown}" resolved outside the workspace when opened (a directory was replaced by a symlink)`,
  );
}

/**
 * A path that names what `handle` has open, wherever it is now: `/proc/self/fd/N` on Linux, so that
 * a later call by path (readdir, lstat of an entry) cannot be sent elsewhere by a swapped symlink.
 */
function fdPath(handle: FileHandle): string {
  return `/proc/self/fd/${handle.fd}`;
}

/**
 * Runs `use` with the directory at `path` open, confined as `openConfined` does; `use` gets a path
 * to pass to readdir and lstat that stays on that directory (see `fdPath`).
 */
export async function inDirectory<T>(
  path: string | Buffer,
  root: string,
  use: (dir: string | Buffer) => Promise<T>,
): Promise<T> {
  const handle = await openConfined(path, root, 'dir');
  try {
    return await use(PROC_FD ? fdPath(handle) : path);
  } finally {
    await handle.close();
  }
}

/** `dir/name` in bytes, for a name read from a directory (which need not be UTF-8). */
export function childPath(dir: string | Buffer, name: Buffer): Buffer {
  return Buffer.concat([typeof dir === 'string' ? Buffer.from(dir) : dir, SEPARATOR, name]);
}
const SEPARATOR = Buffer.from(sep);

/**
 * Creates `dir` (a real path inside `root` returned by `resolveInWorkspace`) and its missing parents
 * one at a time, refusing any component that is no longer a real directory: `mkdir -p` would follow
 * a component swapped for a symlink since the walk and create directories outside.
 */
export async function mkdirConfined(dir: string, root: string): Promise<void> {
  let current = root;
  for (const part of relative(root, dir).split(sep).filter(Boolean)) {
    current = join(current, part);
    try {
      await mkdir(current);
    } catch (error) {
      if (errnoOf(error) !== 'EEXIST') throw error;
    }
    const stat = await lstat(current);
    if (stat.isSymbolicLink())
      throw new FsToolError(
        'symlink_escape',
        `"${relative(root, current)}" became a symlink while directories were being created`,
      );
    if (!stat.isDirectory())
      throw new FsToolError('not_a_directory', `"${relative(root, current)}" is a file, not a directory`);
  }
}
