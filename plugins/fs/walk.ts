/**
 * The directory walk grep and glob share. It uses `readdir` entry types, so a symlink is seen as a
 * symlink and never followed, and it opens each directory as `openConfined` does and reads it through
 * that descriptor: a directory swapped for a symlink during the walk is not entered, so the walk
 * cannot leave the directory it starts in. Names are kept as bytes (a name need not be UTF-8) and
 * shown as `shownName` says. `.git` and `node_modules` are not entered (their size drowns every
 * result), nor `.rousseau`, the host's state: its audit log records every grep pattern, so grep
 * would always find itself there.
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { childPath, inDirectory } from './confine.ts';
import { shownName } from './text.ts';

export const SKIPPED_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules', '.rousseau']);
const MAX_WALK_ENTRIES = 100_000;

export interface WalkEntry {
  /** Absolute path, in bytes, for the file system. */
  path: Buffer;
  /** Relative to the directory the walk started in, as shown to the model. */
  rel: string;
  /** Some name in `rel` is shown escaped (see `shownName`). */
  escaped: boolean;
  dirent: Dirent<Buffer>;
}

export interface WalkState {
  visited: number;
  /** The walk stopped at `MAX_WALK_ENTRIES`. */
  truncated: boolean;
}

/**
 * Every entry below `dir` (inside the workspace `root`), depth first, names in byte order.
 * Unreadable directories, and directories swapped for anything else during the walk, are passed over.
 */
export async function* walk(
  dir: string,
  root: string,
  signal: AbortSignal,
  state: WalkState = { visited: 0, truncated: false },
): AsyncGenerator<WalkEntry> {
  const pending: Omit<WalkEntry, 'dirent'>[] = [{ path: Buffer.from(dir), rel: '', escaped: false }];
  while (pending.length > 0) {
    const current = pending.pop()!;
    let entries: Dirent<Buffer>[];
    try {
      entries = await inDirectory(current.path, root, (open) =>
        readdir(open, { withFileTypes: true, encoding: 'buffer' }),
      );
    } catch {
      continue;
    }
    signal.throwIfAborted();
    entries.sort((a, b) => Buffer.compare(a.name, b.name));
    const subdirs: Omit<WalkEntry, 'dirent'>[] = [];
    for (const dirent of entries) {
      if (++state.visited > MAX_WALK_ENTRIES) {
        state.truncated = true;
        return;
      }
      const name = shownName(dirent.name);
      const entry = {
        path: childPath(current.path, dirent.name),
        rel: current.rel ? join(current.rel, name.text) : name.text,
        escaped: current.escaped || name.escaped,
      };
      yield { ...entry, dirent };
      if (dirent.isDirectory() && !SKIPPED_DIRS.has(name.text)) subdirs.push(entry);
    }
    pending.push(...subdirs.reverse());
  }
}
