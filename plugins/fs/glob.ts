/** `glob`: paths in the workspace that match a glob pattern. */
import { join, relative } from 'node:path';
import Type from 'typebox';
import { defineTool } from 'rousseau-host';
import { resolveInWorkspace } from './confine.ts';
import { FsToolError } from './errors.ts';
import { globToRegExp } from './glob-pattern.ts';
import { limitsOf } from './options.ts';
import { ESCAPED_DESCRIPTION, ESCAPED_MARK, ESCAPED_NOTE } from './text.ts';
import { walk, type WalkState } from './walk.ts';

export const globTool = defineTool({
  name: 'glob',
  description: [
    'List the paths in the workspace that match a glob pattern.',
    'Inputs: pattern, matched against paths relative to path ("*" and "?" within one path segment, "**" across segments, "{a,b}", "[abc]", "[!abc]", "\\" before a character makes it literal),',
    'e.g. "**/*.ts" or "src/*.{js,json}"; path (the directory to search, default the workspace root).',
    'Output: matching paths relative to the workspace root, one per line, sorted, directories ending in "/"; "no matches" when none.',
    'At most 1000 paths, then a "[…]" marker. Does not enter .git, node_modules or .rousseau and does not follow symlinks.',
    ESCAPED_DESCRIPTION,
  ].join(' '),
  inputSchema: Type.Object(
    {
      pattern: Type.String({
        minLength: 1,
        maxLength: 500,
        description: 'Glob pattern relative to path, e.g. "**/*.test.ts".',
      }),
      path: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 4096,
          'x-workspace-path': true,
          description: 'Directory to search, relative to the workspace root. Default: the root.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { title: 'Find files by name', readOnly: true, destructive: false, idempotent: true, openWorld: false },
  async execute({ pattern, path = '.' }, ctx) {
    const max = limitsOf(ctx.options).maxResults * 5;
    const matcher = globToRegExp(pattern);
    const target = await resolveInWorkspace(ctx.workspace, path, 'read');
    if (!target.stat?.isDirectory()) throw new FsToolError('not_a_directory', `${target.rel} is not a directory`);
    const found: string[] = [];
    const walked: WalkState = { visited: 0, truncated: false };
    let escaped = false;
    for await (const entry of walk(target.real, target.root, ctx.signal, walked)) {
      if (!matcher.test(entry.rel)) continue;
      escaped ||= entry.escaped;
      found.push(
        relative(target.root, join(target.real, entry.rel)) +
          (entry.dirent.isDirectory() ? '/' : '') +
          (entry.escaped ? ESCAPED_MARK : ''),
      );
      if (found.length > max) break;
    }
    if (found.length === 0)
      return `no matches for "${pattern}" in ${target.rel}${walked.truncated ? ` (stopped after ${walked.visited - 1} entries)` : ''}`;
    found.sort();
    const rows = found.slice(0, max);
    if (found.length > max) rows.push(`[… more than ${max} matches; narrow the pattern or path]`);
    if (walked.truncated) rows.push(`[… stopped after ${walked.visited - 1} entries; search a smaller path]`);
    if (escaped) rows.push(ESCAPED_NOTE);
    return rows.join('\n');
  },
});
