/** Opening a confined path as a regular file, and reading it with a cap: what read, edit and grep share. */
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
  return openRegularAt(target.real, target.root, target.rel, tool);
}

/**
 * `openRegularFile` for a path found by walking a confined directory, whose entry type said "file":
 * the open and the check on the descriptor are what make it safe, the type only what makes it likely.
 */
export async function openRegularAt(path: string | Buffer, root: string, rel: string, tool: string): Promise<OpenFile> {
  const handle = await openConfined(path, root, 'read');
  try {
    const stat = await handle.stat();
    assertRegular(rel, kindOf(stat), tool);
    const sample = Buffer.alloc(Math.min(SAMPLE_BYTES, stat.size));
    const { bytesRead } = await handle.read(sample, 0, sample.length, 0);
    return {
      handle,
      size: stat.size,
      mode: stat.mode & 0o7777,
      head: { binary: looksBinary(sample.subarray(0, bytesRead), stat.size > bytesRead) },
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * The whole of an open file, or `undefined` when it holds more than `cap` bytes. It is read by bytes
 * up to the cap whatever its size said: a file that grows after its size was checked cannot make
 * the tool hold more than the cap.
 */
export async function readCapped(file: OpenFile, cap: number): Promise<Buffer | undefined> {
  let buffer = Buffer.allocUnsafe(Math.min(file.size, cap) + 1);
  let length = 0;
  for (;;) {
    const { bytesRead } = await file.handle.read(buffer, length, buffer.length - length, length);
    if (bytesRead === 0) return buffer.subarray(0, length);
    length += bytesRead;
    if (length > cap) return undefined;
    if (length === buffer.length)
      buffer = Buffer.concat([buffer, Buffer.allocUnsafe(Math.min(buffer.length, cap + 1 - length))]);
  }
}

function assertRegular(rel: string, kind: ReturnType<typeof kindOf>, tool: string): void {
  if (kind === 'file') return;
  const hint = kind === 'dir' ? '; use ls or glob to list it' : '';
  throw new FsToolError(
    'not_a_file',
    `${rel} is a ${kind === 'dir' ? 'directory' : kind}, not a regular file; ${tool} handles regular files only${hint}`,
  );
}
