/** Opening a confined path as a regular file: the checks read and edit share. */
import type { FileHandle } from 'node:fs/promises';
import { openConfined, type Resolved } from './confine.ts';
import { FsToolError } from './errors.ts';
import { kindOf } from './kinds.ts';
import { looksBinary, SAMPLE_BYTES } from './text.ts';

export interface OpenFile {
  handle: FileHandle;
  size: number;
  mode: number;
  head: { binary: boolean };
}

/**
 * Refuses what is not a regular file before opening it (a FIFO would block a read forever), opens it
 * without following symlinks and without blocking, and checks again on the descriptor.
 */
export async function openRegularFile(target: Resolved, tool: string): Promise<OpenFile> {
  if (!target.stat) throw new FsToolError('not_found', `${target.rel} does not exist`);
  assertRegular(target.rel, kindOf(target.stat), tool);
  const handle = await openConfined(target.real, target.root, 'read');
  try {
    const stat = await handle.stat();
    assertRegular(target.rel, kindOf(stat), tool);
    const sample = Buffer.alloc(Math.min(SAMPLE_BYTES, stat.size));
    const { bytesRead } = await handle.read(sample, 0, sample.length, 0);
    return { handle, size: stat.size, mode: stat.mode & 0o7777, head: { binary: looksBinary(sample.subarray(0, bytesRead), stat.size > bytesRead) } };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

function assertRegular(rel: string, kind: ReturnType<typeof kindOf>, tool: string): void {
  if (kind === 'file') return;
  const hint = kind === 'dir' ? '; use ls or glob to list it' : '';
  throw new FsToolError('not_a_file', `${rel} is a ${kind === 'dir' ? 'directory' : kind}, not a regular file; ${tool} handles regular files only${hint}`);
}
