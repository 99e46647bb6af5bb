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
import { constants, type Stats } from 'node:fs';
import { lstat, open, readlink, realpath, type FileHandle } from 'node:fs/promises';
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
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** Resolves `input` (relative to the workspace, or absolute inside it) to a real path inside it, or throws. */
export async function resolveInWorkspace(workspace: string, input: string, purpose: Purpose, writeProtected: readonly string[] = []): Promise<Resolved> {
  if (input.includes('\0')) throw new FsToolError('invalid_path', `path ${JSON.stringify(input)} contains a NUL byte`);
  if (input.startsWith('~')) {
    throw new FsToolError('invalid_path', `path "${input}" starts with "~": home directories are not expanded; give a path relative to the workspace root`);
  }
  const root = await realpath(workspace);
  const rel = lexicalRelative(workspace, root, input);
  if (rel === undefined) throw new FsToolError('outside_workspace', `path "${input}" is outside the workspace; give a path relative to the workspace root`);

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
      if (code === 'ENOTDIR') throw new FsToolError('not_a_directory', `path "${input}": "${relative(root, current)}" is a file, not a directory`);
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
      throw new FsToolError('not_a_directory', `path "${input}": "${relative(root, current)}" is a file, not a directory`);
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
      throw new FsToolError('dangling_symlink', `path "${input}": "${relative(root, link)}" is a symlink to a missing target; refusing to create it`);
    }
    if (code === 'ELOOP') throw new FsToolError('invalid_path', `path "${input}": "${relative(root, link)}" is a symlink loop`);
    throw error;
  }
  if (!isInside(root, target)) {
    throw new FsToolError('symlink_escape', `path "${input}" leads out of the workspace through the symlink "${relative(root, link)}"`);
  }
  return target;
}

function finish(real: string, root: string, purpose: Purpose, writeProtected: readonly string[], input: string, stat?: Stats): Resolved {
  const rel = relative(root, real) || '.';
  if (purpose === 'write') {
    const hit = rel.split(sep).find((part) => writeProtected.includes(part));
    if (hit) throw new FsToolError('write_protected', `path "${input}" is inside "${hit}", which file tools may not change`);
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

const OPEN_FLAGS = { read: constants.O_RDONLY | constants.O_NONBLOCK, write: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL };

/**
 * Opens a path returned by `resolveInWorkspace` without following a final symlink (O_NOFOLLOW) and
 * without blocking on a FIFO (O_NONBLOCK), then asks the kernel where the descriptor really points
 * (`/proc/self/fd`, Linux): if a directory was swapped for a symlink since the walk, it is refused.
 */
export async function openConfined(path: string, root: string, mode: 'read' | 'write', fileMode = 0o666): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, OPEN_FLAGS[mode] | constants.O_NOFOLLOW, fileMode);
  } catch (error) {
    if (errnoOf(error) === 'ELOOP') throw new FsToolError('symlink_escape', `"${relative(root, path)}" became a symlink while it was being opened`);
    if (errnoOf(error) === 'ENOENT') throw new FsToolError('not_found', `"${relative(root, path)}" does not exist`);
    throw error;
  }
  let opened: string | undefined;
  try {
    opened = await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    opened = undefined; // no /proc (macOS): the walk's check stands alone
  }
  if (opened !== undefined && !isInside(root, opened)) {
    await handle.close();
    throw new FsToolError('symlink_escape', `"${relative(root, path)}" resolved outside the workspace when opened (a directory was replaced by a symlink)`);
  }
  return handle;
}
