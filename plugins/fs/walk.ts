/**
 * The directory walk grep and glob share. It uses `readdir` entry types, so a symlink is seen as a
 * symlink and never followed: the walk cannot leave the directory it starts in. `.git` and
 * `node_modules` are not entered (their size drowns every result), nor `.rousseau`, the host's
 * state: its audit log records every grep pattern, so grep would always find itself there.
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';

export const SKIPPED_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules', '.rousseau']);
export const MAX_WALK_ENTRIES = 100_000;

export interface WalkEntry {
  /** Absolute real path. */
  path: string;
  /** Relative to the directory the walk started in. */
  rel: string;
  dirent: Dirent;
}

export interface WalkState {
  visited: number;
  /** The walk stopped at `MAX_WALK_ENTRIES`. */
  truncated: boolean;
}

/** Every entry below `dir`, depth first, names in order. Unreadable directories are passed over. */
export async function* walk(dir: string, signal: AbortSignal, state: WalkState = { visited: 0, truncated: false }): AsyncGenerator<WalkEntry> {
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch {
      continue;
    }
    signal.throwIfAborted();
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const dirent of entries) {
      if (++state.visited > MAX_WALK_ENTRIES) {
        state.truncated = true;
        return;
      }
      const path = join(current, dirent.name);
      yield { path, rel: relative(dir, path), dirent };
      if (dirent.isDirectory() && !SKIPPED_DIRS.has(dirent.name)) subdirs.push(path);
    }
    pending.push(...subdirs.reverse());
  }
}
