/** `edit`: replace one exact, unique piece of text in a file (or every occurrence), atomically. */
import Type from 'typebox';
import { defineTool } from 'rousseau-host';
import { writeAtomic } from './atomic.ts';
import { resolveInWorkspace } from './confine.ts';
import { FsToolError } from './errors.ts';
import { openRegularFile, readCapped } from './open-file.ts';
import { limitsOf } from './options.ts';
import { countLines, plural } from './text.ts';
import { MAX_CONTENT_CHARS } from './write.ts';

export const editTool = defineTool({
  name: 'edit',
  description: [
    'Replace an exact piece of text in a workspace file.',
    'Inputs: path; old_string (the text to replace, copied exactly from the file, whitespace included; it must occur exactly once unless replace_all);',
    'new_string (its replacement); replace_all (replace every occurrence, default false).',
    'Output: one line, e.g. "edited src/a.ts: 1 replacement at line 12 (3 lines → 5 lines), now 4567 bytes".',
    'Fails, leaving the file untouched, when old_string is missing, occurs more than once without replace_all, equals new_string, or the file is binary,',
    `over the size cap (4 MiB by default), or outside the workspace. The write is atomic and keeps the file's permissions.`,
  ].join(' '),
  inputSchema: Type.Object(
    {
      path: Type.String({
        minLength: 1,
        maxLength: 4096,
        'x-workspace-path': true,
        description: 'The file, relative to the workspace root (or absolute inside it).',
      }),
      old_string: Type.String({
        minLength: 1,
        maxLength: MAX_CONTENT_CHARS,
        description: 'Exact text to replace; must be unique in the file unless replace_all is true.',
      }),
      new_string: Type.String({ maxLength: MAX_CONTENT_CHARS, description: 'The replacement text.' }),
      replace_all: Type.Optional(
        Type.Boolean({ description: 'Replace every occurrence instead of exactly one. Default false.' }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { title: 'Edit a file', readOnly: false, destructive: true, idempotent: false, openWorld: false },
  async execute({ path, old_string: oldText, new_string: newText, replace_all: all = false }, ctx) {
    const { writeProtected, maxFileBytes } = limitsOf(ctx.options);
    if (oldText === newText)
      throw new FsToolError('invalid_edit', 'old_string and new_string are the same; nothing to change');
    const target = await resolveInWorkspace(ctx.workspace, path, 'write', writeProtected);
    const file = await openRegularFile(target, 'edit');
    let bytes: Buffer | undefined;
    try {
      if (file.size <= maxFileBytes) {
        if (file.head.binary)
          throw new FsToolError('binary_file', `${target.rel} is a binary file; edit changes text files only`);
        bytes = await readCapped(file, maxFileBytes);
      }
    } finally {
      await file.handle.close();
    }
    if (!bytes)
      throw new FsToolError(
        'too_large',
        `${target.rel} is over edit's cap of ${maxFileBytes} bytes; use write or bash`,
      );
    const text = bytes.toString('utf8');

    const first = text.indexOf(oldText);
    if (first === -1) {
      throw new FsToolError(
        'no_match',
        `old_string was not found in ${target.rel}; read the file and copy the exact text, whitespace and indentation included`,
      );
    }
    let count = 0;
    for (let at = first; at !== -1; at = text.indexOf(oldText, at + oldText.length)) count++;
    if (count > 1 && !all) {
      throw new FsToolError(
        'not_unique',
        `old_string occurs ${count} times in ${target.rel}; include more surrounding lines to make it unique, or set replace_all`,
      );
    }
    // Checked before the new text is built: replace_all can multiply a file far past anything write may write.
    const length = text.length + count * (newText.length - oldText.length);
    if (length > MAX_CONTENT_CHARS) {
      throw new FsToolError(
        'too_large',
        `the edit would make ${target.rel} ${length} characters long, over write's cap of ${MAX_CONTENT_CHARS} characters; the file is left as it was`,
      );
    }
    const updated = all
      ? text.replaceAll(oldText, () => newText)
      : text.slice(0, first) + newText + text.slice(first + oldText.length);
    ctx.signal.throwIfAborted();
    const written = await writeAtomic(target.real, target.root, updated, file.mode);
    const line = text.slice(0, first).split('\n').length;
    const shape = `${plural(countLines(oldText), 'line')} → ${plural(countLines(newText), 'line')}`;
    return {
      content: `edited ${target.rel}: ${plural(count, 'replacement')}${count === 1 ? ` at line ${line}` : `, first at line ${line}`} (${shape}), now ${written} bytes`,
      data: { path: target.rel, replacements: count, line, bytes: written },
    };
  },
});
