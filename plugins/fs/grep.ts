/** `grep`: a JavaScript regular expression over the workspace's text files. */
import { basename, join, relative } from 'node:path';
import Type from 'typebox';
import { defineTool } from 'rousseau-host';
import { resolveInWorkspace } from './confine.ts';
import { FsToolError } from './errors.ts';
import { globToRegExp } from './glob-pattern.ts';
import { limitsOf } from './options.ts';
import { MATCH_BUDGET_MS, RegexWorker } from './regex-worker.ts';
import { openRegularAt, readCapped, type OpenFile } from './open-file.ts';
import { ESCAPED_DESCRIPTION, ESCAPED_MARK, ESCAPED_NOTE, plural } from './text.ts';
import { walk, type WalkState } from './walk.ts';

const MAX_PATTERN_CHARS = 1000;
const MAX_ROW_CHARS = 500;
const BATCH_BYTES = 4 * 1024 * 1024;

export const grepTool = defineTool({
  name: 'grep',
  description: [
    'Search the text files of the workspace for a JavaScript regular expression, line by line.',
    `Inputs: pattern (a JavaScript RegExp source, at most ${MAX_PATTERN_CHARS} characters, e.g. "function \\\\w+\\\\("); path (a file or directory, default the workspace root);`,
    'include (a glob on file names such as "*.ts", or on paths below path when it has a "/", such as "src/**/*.ts"); ignore_case (default false).',
    'Output: one row per matching line, "path:line: text", paths relative to the workspace root, lines cut at 500 characters; "no matches" when none.',
    'Stops at 200 matches with a "[…]" marker. Does not enter .git, node_modules or .rousseau, does not follow symlinks, and skips binary files, files over 4 MiB',
    'and files that cannot be opened (the output says how many).',
    ESCAPED_DESCRIPTION,
    `A pattern that takes over ${MATCH_BUDGET_MS} ms on one file (catastrophic backtracking) stops the search with an error.`,
  ].join(' '),
  inputSchema: Type.Object(
    {
      pattern: Type.String({
        minLength: 1,
        maxLength: MAX_PATTERN_CHARS,
        description: 'JavaScript regular expression source, without slashes or flags.',
      }),
      path: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 4096,
          'x-workspace-path': true,
          description: 'File or directory to search, relative to the workspace root. Default: the root.',
        }),
      ),
      include: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 500,
          description: 'Only files matching this glob, e.g. "*.ts" or "src/**/*.{ts,tsx}".',
        }),
      ),
      ignore_case: Type.Optional(Type.Boolean({ description: 'Match case-insensitively. Default false.' })),
    },
    { additionalProperties: false },
  ),
  annotations: {
    title: 'Search file contents',
    readOnly: true,
    destructive: false,
    idempotent: true,
    openWorld: false,
  },
  async execute({ pattern, path = '.', include, ignore_case: ignoreCase = false }, ctx) {
    const { maxFileBytes, maxResults } = limitsOf(ctx.options);
    let regex: RegExp;
    try {
      regex = new RegExp(pattern, ignoreCase ? 'iu' : 'u');
    } catch (error) {
      throw new FsToolError(
        'invalid_pattern',
        `pattern is not a valid JavaScript regular expression: ${(error as Error).message}`,
      );
    }
    const includes = include === undefined ? undefined : globToRegExp(include);
    const matchesInclude = (rel: string) => !includes || includes.test(include!.includes('/') ? rel : basename(rel));
    const target = await resolveInWorkspace(ctx.workspace, path, 'read');
    if (!target.stat) throw new FsToolError('not_found', `${target.rel} does not exist`);

    const rows: string[] = [];
    const skipped = { binary: 0, large: 0, unopened: 0 };
    let escaped = false;
    const walked: WalkState = { visited: 0, truncated: false };
    let capped = false;

    if (!target.stat.isFile() && !target.stat.isDirectory()) {
      throw new FsToolError('not_a_file', `${target.rel} is neither a regular file nor a directory`);
    }
    // Files go to the regex worker in batches of up to 4 MiB: one round trip per batch, not per file.
    const matcher = new RegexWorker(regex);
    const batch: { shown: string; text: string }[] = [];
    let batchBytes = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const files = batch.splice(0);
      batchBytes = 0;
      const hits = await matcher.match(
        files.map((f) => f.text),
        files.map((f) => f.shown),
        ctx.signal,
      );
      for (const [n, file] of files.entries()) {
        const lines = hits[n]!.length ? file.text.split('\n') : [];
        for (const i of hits[n]!) {
          if (rows.length >= maxResults) {
            capped = true;
            return;
          }
          const line = lines[i]!.endsWith('\r') ? lines[i]!.slice(0, -1) : lines[i]!;
          rows.push(
            `${file.shown}:${i + 1}: ${line.length > MAX_ROW_CHARS ? `${line.slice(0, MAX_ROW_CHARS)}…` : line}`,
          );
        }
      }
    };
    /** Adds a file to the batch; `walked` files that cannot be opened as regular files are counted, not fatal. */
    const searchFile = async (path: string | Buffer, shown: string, walked: boolean) => {
      let file: OpenFile;
      try {
        file = await openRegularAt(path, target.root, shown, 'grep');
      } catch (error) {
        if (!walked) throw error;
        return void skipped.unopened++;
      }
      let bytes: Buffer | undefined;
      try {
        if (file.size > maxFileBytes) return void skipped.large++;
        if (file.head.binary) return void skipped.binary++;
        bytes = await readCapped(file, maxFileBytes);
      } finally {
        await file.handle.close();
      }
      if (!bytes) return void skipped.large++;
      if (batchBytes + bytes.length > BATCH_BYTES) await flush();
      batch.push({ shown, text: bytes.toString('utf8') });
      batchBytes += bytes.length;
    };

    try {
      if (target.stat.isFile()) {
        await searchFile(target.real, target.rel, false);
      } else {
        for await (const entry of walk(target.real, target.root, ctx.signal, walked)) {
          if (!entry.dirent.isFile() || !matchesInclude(entry.rel)) continue;
          escaped ||= entry.escaped;
          await searchFile(
            entry.path,
            relative(target.root, join(target.real, entry.rel)) + (entry.escaped ? ESCAPED_MARK : ''),
            true,
          );
          if (capped) break;
        }
      }
      await flush();
    } finally {
      await matcher.close();
    }

    const notes: string[] = [];
    if (capped) notes.push(`[… stopped at ${maxResults} matches; narrow the pattern, path or include to see the rest]`);
    if (walked.truncated) notes.push(`[… stopped after ${walked.visited - 1} entries; search a smaller path]`);
    if (skipped.binary || skipped.large) {
      notes.push(
        `(skipped ${plural(skipped.binary, 'binary file')} and ${plural(skipped.large, 'file')} over ${maxFileBytes} bytes)`,
      );
    }
    if (skipped.unopened)
      notes.push(
        `(skipped ${plural(skipped.unopened, 'file')} that could not be opened as a regular file in the workspace: unreadable, or changed during the search)`,
      );
    if (escaped) notes.push(ESCAPED_NOTE);
    if (rows.length === 0)
      return [`no matches for /${pattern}/${ignoreCase ? 'i' : ''} in ${target.rel}`, ...notes].join('\n');
    return [...rows, ...notes].join('\n');
  },
});
