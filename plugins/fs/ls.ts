/** `ls`: the entries of one workspace directory, with type and size. */
import { lstat, readdir, readlink } from 'node:fs/promises';
import Type from 'typebox';
import { defineTool } from 'rousseau-host';
import { childPath, inDirectory, resolveInWorkspace } from './confine.ts';
import { FsToolError } from './errors.ts';
import { kindOf } from './kinds.ts';
import { limitsOf } from './options.ts';
import { ESCAPED_DESCRIPTION, ESCAPED_MARK, ESCAPED_NOTE, shownName } from './text.ts';

export const lsTool = defineTool({
  name: 'ls',
  description: [
    'List one directory of the workspace (not recursive; use glob for that).',
    'Input: path (default the workspace root).',
    'Output: one row per entry, sorted by name: "<type> <size in bytes> <name>", type one of file, dir, symlink, fifo, socket, device;',
    'directories end in "/", symlinks show "-> target", sizes of non-files are "-". Hidden entries are included. At most 1000 rows, then a "[…]" marker.',
    ESCAPED_DESCRIPTION,
  ].join(' '),
  inputSchema: Type.Object(
    {
      path: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 4096,
          'x-workspace-path': true,
          description: 'Directory to list, relative to the workspace root. Default: the root.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { title: 'List a directory', readOnly: true, destructive: false, idempotent: true, openWorld: false },
  async execute({ path = '.' }, ctx) {
    const max = limitsOf(ctx.options).maxResults * 5;
    const target = await resolveInWorkspace(ctx.workspace, path, 'read');
    if (!target.stat) throw new FsToolError('not_found', `${target.rel} does not exist`);
    if (!target.stat.isDirectory())
      throw new FsToolError('not_a_directory', `${target.rel} is not a directory; use read for files`);
    // Read through the open directory: a directory swapped for a symlink after the walk lists nothing outside.
    return inDirectory(target.real, target.root, async (dir) => {
      const names = (await readdir(dir, { encoding: 'buffer' })).sort(Buffer.compare);
      if (names.length === 0) return `(${target.rel} is empty)`;
      const rows: string[] = [];
      let escaped = false;
      for (const name of names.slice(0, max)) {
        const full = childPath(dir, name);
        const stat = await lstat(full).catch(() => undefined);
        if (!stat) continue; // removed since readdir
        const kind = kindOf(stat);
        const size = kind === 'file' ? String(stat.size) : '-';
        const shown = shownName(name);
        const link =
          kind === 'symlink'
            ? await readlink(full, { encoding: 'buffer' }).then(shownName, () => ({ text: '?', escaped: false }))
            : undefined;
        const mark = shown.escaped || link?.escaped ? ESCAPED_MARK : '';
        escaped ||= mark !== '';
        rows.push(
          `${kind.padEnd(7)} ${size.padStart(10)}  ${shown.text}${kind === 'dir' ? '/' : ''}${link ? ` -> ${link.text}` : ''}${mark}`,
        );
      }
      if (names.length > max) rows.push(`[… ${names.length - max} more entries not shown]`);
      if (escaped) rows.push(ESCAPED_NOTE);
      return rows.join('\n');
    });
  },
});
