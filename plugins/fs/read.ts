/** `read`: a text file with line numbers, a window of lines, a byte cap with a marker. */
import type { FileHandle } from 'node:fs/promises';
import Type from 'typebox';
import { defineTool } from 'rousseau-host';
import { openRegularFile } from './open-file.ts';
import { limitsOf } from './options.ts';
import { FsToolError } from './errors.ts';
import { resolveInWorkspace } from './confine.ts';

const DEFAULT_LIMIT = 2000;
const MAX_LINE_CHARS = 2000;

export const readTool = defineTool({
  name: 'read',
  description: [
    'Read a text file from the workspace, with line numbers.',
    'Inputs: path (relative to the workspace root); offset (first line, 1-based, default 1); limit (most lines, default 2000).',
    'Output: one row per line, "<line number><TAB><text>". Lines over 2000 characters are cut, with a marker. When the window or the byte cap',
    '(50 000 bytes by default) stops the output, a final "[…]" line says which offset to pass next.',
    'Refuses directories, FIFOs, devices and binary files (a NUL byte or invalid UTF-8 in the first 8 KiB), and any path outside the workspace.',
  ].join(' '),
  inputSchema: Type.Object(
    {
      path: Type.String({
        minLength: 1,
        maxLength: 4096,
        'x-workspace-path': true,
        description: 'The file, relative to the workspace root (or absolute inside it).',
      }),
      offset: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'First line to return, 1-based. Default 1.' }),
      ),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 100_000, description: 'Most lines to return. Default 2000.' }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { title: 'Read a file', readOnly: true, destructive: false, idempotent: true, openWorld: false },
  async execute({ path, offset = 1, limit = DEFAULT_LIMIT }, ctx) {
    const { readMaxBytes } = limitsOf(ctx.options);
    const target = await resolveInWorkspace(ctx.workspace, path, 'read');
    const file = await openRegularFile(target, 'read');
    const { size } = file;
    try {
      if (size === 0) return `(${target.rel} is empty)`;
      if (file.head.binary)
        throw new FsToolError(
          'binary_file',
          `${target.rel} is a binary file (${size} bytes); read shows text files only`,
        );
      const rows: string[] = [];
      let bytes = 0;
      let lineNo = 0;
      let stop: 'limit' | 'bytes' | undefined;
      await eachLine(file.handle, file.size, ctx.signal, (head, length, more) => {
        lineNo++;
        if (lineNo < offset) return true;
        const text = head.toString('utf8');
        const chars = text.length > MAX_LINE_CHARS ? [...text] : undefined;
        const cut = length > head.length || (chars !== undefined && chars.length > MAX_LINE_CHARS);
        const shown = cut
          ? `${(chars ?? [...text]).slice(0, MAX_LINE_CHARS).join('')}… [line cut at ${MAX_LINE_CHARS} characters of ${length} bytes]`
          : text;
        const row = `${String(lineNo).padStart(6)}\t${shown}`;
        bytes += Buffer.byteLength(row) + 1;
        if (bytes > readMaxBytes && rows.length > 0) {
          stop = 'bytes';
          return false;
        }
        rows.push(row);
        if (rows.length < limit) return true;
        if (more) stop = 'limit';
        return false;
      });
      if (rows.length === 0)
        throw new FsToolError(
          'offset_past_end',
          `offset ${offset} is past the end of ${target.rel}, which has ${lineNo} lines`,
        );
      const last = offset + rows.length - 1;
      if (stop === 'bytes')
        rows.push(
          `[… output capped at ${readMaxBytes} bytes: lines ${offset}–${last} of ${target.rel} (${size} bytes) shown; call read with offset=${last + 1} to continue]`,
        );
      if (stop === 'limit')
        rows.push(
          `[… more lines follow: lines ${offset}–${last} shown; call read with offset=${last + 1} to continue]`,
        );
      return rows.join('\n');
    } finally {
      await file.handle.close();
    }
  },
});

/** Bytes read at a time: the most read holds in memory whatever the file's lines are like. */
const CHUNK_BYTES = 1024 * 1024;
/** Bytes kept of one line: room for MAX_LINE_CHARS characters of up to 4 bytes. The rest is counted, not kept. */
const KEEP_BYTES = MAX_LINE_CHARS * 4;

/**
 * Calls `onLine` for each line of the file, in order, until it returns false: with the line's first
 * KEEP_BYTES bytes (without its "\n" or "\r\n"), its whole length in bytes, and whether anything
 * follows it. The file is read by bytes, so no line, however long, becomes a string past the cap
 * (a line of hundreds of MB built by readline threw RangeError from a stream event, out of the host).
 */
async function eachLine(
  handle: FileHandle,
  size: number,
  signal: AbortSignal,
  onLine: (head: Buffer, length: number, more: boolean) => boolean,
): Promise<void> {
  const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size + 1));
  const head = Buffer.allocUnsafe(KEEP_BYTES);
  let kept = 0;
  let length = 0;
  let last = -1;
  let position = 0;
  const end = (more: boolean) => {
    const cr = last === 0x0d ? 1 : 0;
    const line = head.subarray(0, Math.min(kept, length - cr));
    const go = onLine(line, length - cr, more);
    kept = length = 0;
    last = -1;
    return go;
  };
  for (;;) {
    signal.throwIfAborted();
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const data = chunk.subarray(0, bytesRead);
    for (let start = 0; start < bytesRead; ) {
      const newline = data.indexOf(0x0a, start);
      const stop = newline === -1 ? bytesRead : newline;
      if (stop > start) {
        kept += data.copy(head, kept, start, Math.min(stop, start + KEEP_BYTES - kept));
        length += stop - start;
        last = data[stop - 1]!;
      }
      if (newline === -1) break;
      if (!end(newline + 1 < bytesRead || position < size)) return;
      start = newline + 1;
    }
  }
  if (length > 0) end(false);
}
