/** `read`: a text file with line numbers, a window of lines, a byte cap with a marker. */
import { createInterface } from 'node:readline';
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
    'Output: one row per line, "<line number><TAB><text>". Lines over 2000 characters are cut. When the window or the byte cap',
    '(50 000 bytes by default) stops the output, a final "[…]" line says which offset to pass next.',
    'Refuses directories, FIFOs, devices and binary files (a NUL byte or invalid UTF-8 in the first 8 KiB), and any path outside the workspace.',
  ].join(' '),
  inputSchema: Type.Object(
    {
      path: Type.String({ minLength: 1, maxLength: 4096, description: 'The file, relative to the workspace root (or absolute inside it).' }),
      offset: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'First line to return, 1-based. Default 1.' })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'Most lines to return. Default 2000.' })),
    },
    { additionalProperties: false },
  ),
  annotations: { title: 'Read a file', readOnly: true, idempotent: true },
  async execute({ path, offset = 1, limit = DEFAULT_LIMIT }, ctx) {
    const { readMaxBytes } = limitsOf(ctx.options);
    const target = await resolveInWorkspace(ctx.workspace, path, 'read');
    const { handle, size, head } = await openRegularFile(target, 'read');
    try {
      if (size === 0) return `(${target.rel} is empty)`;
      if (head.binary) throw new FsToolError('binary_file', `${target.rel} is a binary file (${size} bytes); read shows text files only`);
      const lines = createInterface({ input: handle.createReadStream({ start: 0, autoClose: false }), crlfDelay: Infinity });
      const rows: string[] = [];
      let bytes = 0;
      let lineNo = 0;
      let stop: 'limit' | 'bytes' | undefined;
      for await (const line of lines) {
        lineNo++;
        if (lineNo < offset) continue;
        if (rows.length >= limit) {
          stop = 'limit';
          break;
        }
        const shown = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}… [line cut at ${MAX_LINE_CHARS} of ${line.length} characters]` : line;
        const row = `${String(lineNo).padStart(6)}\t${shown}`;
        bytes += Buffer.byteLength(row) + 1;
        if (bytes > readMaxBytes && rows.length > 0) {
          stop = 'bytes';
          break;
        }
        rows.push(row);
        if (lineNo % 4096 === 0) ctx.signal.throwIfAborted();
      }
      lines.close();
      if (rows.length === 0) throw new FsToolError('offset_past_end', `offset ${offset} is past the end of ${target.rel}, which has ${lineNo} lines`);
      const last = offset + rows.length - 1;
      if (stop === 'bytes') rows.push(`[… output capped at ${readMaxBytes} bytes: lines ${offset}–${last} of ${target.rel} (${size} bytes) shown; call read with offset=${last + 1} to continue]`);
      if (stop === 'limit') rows.push(`[… more lines follow: lines ${offset}–${last} shown; call read with offset=${last + 1} to continue]`);
      return rows.join('\n');
    } finally {
      await handle.close();
    }
  },
});
