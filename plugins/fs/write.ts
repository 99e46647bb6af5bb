/** `write`: create or replace a whole file, atomically, keeping an existing file's mode. */
import { dirname } from 'node:path';
import Type from 'typebox';
import { defineTool } from 'rousseau-host';
import { writeAtomic } from './atomic.ts';
import { mkdirConfined, resolveInWorkspace } from './confine.ts';
import { FsToolError } from './errors.ts';
import { kindOf } from './kinds.ts';
import { limitsOf } from './options.ts';
import { countLines, plural } from './text.ts';

export const MAX_CONTENT_CHARS = 10_000_000;

export const writeTool = defineTool({
  name: 'write',
  description: [
    'Create a file, or replace its whole content, in the workspace. Parent directories are created.',
    'Inputs: path (relative to the workspace root); content (the complete new text, UTF-8).',
    'Output: one line saying what was done, e.g. "created src/a.ts: 120 bytes, 5 lines" or "replaced src/a.ts: 120 bytes, 5 lines (was 90 bytes)".',
    'The write is atomic (temporary file, then rename), so the file is either old or new, never half-written, and an existing file keeps its permissions.',
    'Refuses paths outside the workspace (including through symlinks or dangling symlinks), directories, and anything inside .git or the host state directory .rousseau.',
    'To change part of a file, use edit.',
  ].join(' '),
  inputSchema: Type.Object(
    {
      path: Type.String({
        minLength: 1,
        maxLength: 4096,
        'x-workspace-path': true,
        description: 'The file, relative to the workspace root (or absolute inside it).',
      }),
      content: Type.String({ maxLength: MAX_CONTENT_CHARS, description: 'The complete new content of the file.' }),
    },
    { additionalProperties: false },
  ),
  annotations: { title: 'Write a file', readOnly: false, destructive: true, idempotent: true, openWorld: false },
  async execute({ path, content }, ctx) {
    const { writeProtected } = limitsOf(ctx.options);
    const target = await resolveInWorkspace(ctx.workspace, path, 'write', writeProtected);
    const before = target.stat;
    if (before && !before.isFile()) {
      const kind = kindOf(before);
      throw new FsToolError(
        'not_a_file',
        `${target.rel} is a ${kind === 'dir' ? 'directory' : kind}; write replaces regular files only`,
      );
    }
    ctx.signal.throwIfAborted();
    if (!before) await mkdirConfined(dirname(target.real), target.root);
    const bytes = await writeAtomic(target.real, target.root, content, before ? before.mode & 0o7777 : undefined);
    const what = `${plural(bytes, 'byte')}, ${plural(countLines(content), 'line')}`;
    return {
      content: before ? `replaced ${target.rel}: ${what} (was ${before.size} bytes)` : `created ${target.rel}: ${what}`,
      data: { path: target.rel, bytes, created: !before, ...(before ? { previousBytes: before.size } : {}) },
    };
  },
});
