/**
 * Atomic replacement of a file: the new content goes to a temporary file in the same directory,
 * which is flushed and renamed over the target. A reader sees the old file or the new one, never a
 * half-written one, and on any error the target is untouched. Writing through a hard link replaces
 * the link in the workspace and leaves the other name's content as it was.
 */
import { randomBytes } from 'node:crypto';
import { rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { openConfined } from './confine.ts';

/** Writes `data` to `path` (a real path inside `root`) atomically; `mode` keeps an existing file's permissions. */
export async function writeAtomic(path: string, root: string, data: string, mode?: number): Promise<number> {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  let created = false;
  try {
    const handle = await openConfined(temp, root, 'write', mode ?? 0o666);
    created = true;
    try {
      await handle.writeFile(data, 'utf8');
      // The umask narrowed the mode at creation; set it exactly so the file keeps its permissions.
      if (mode !== undefined) await handle.chmod(mode);
      await handle.datasync();
      await rename(temp, path);
      created = false;
      return Buffer.byteLength(data);
    } finally {
      await handle.close();
    }
  } finally {
    if (created) await unlink(temp).catch(() => {});
  }
}
