/** `rousseau-host check PATH`: load one plugin module and run the contract check; no config needed. */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { EXIT, loadAlone, parseJsonFlag, print, printJson, UsageError, type Command } from './command.ts';

export const check: Command = {
  name: 'check',
  summary:
    'Load one plugin module (a file, a directory or a package name) and run the contract check. Exit 0 when it passes, 1 otherwise.',
  usage: 'check PATH [--options JSON] [--strict] [--json]',
  options: { options: { type: 'string' }, strict: { type: 'boolean' } },
  async run({ values, positionals }) {
    const [target, ...rest] = positionals;
    if (!target || rest.length)
      throw new UsageError('check takes exactly one PATH (a plugin file, directory or package name)');
    let options: unknown;
    if (typeof values.options === 'string') {
      options = parseJsonFlag('--options', values.options);
    }
    const cwd = resolve(typeof values.cwd === 'string' ? values.cwd : process.cwd());
    const module = readsAsPath(target, cwd) ? resolve(cwd, target) : target;
    const plugin = await loadAlone(values, cwd, { module, ...(options === undefined ? {} : { options }) });
    const warnings = plugin?.warnings ?? [];
    // --strict: the warnings (an over-broad schema, no tools) fail the check like errors.
    const ok = plugin?.status === 'loaded' && !(values.strict && warnings.length);
    // A plugin that fails still has its warnings: they are the next thing its author must fix.
    const violations = [
      ...(plugin?.error?.violations ?? []),
      ...(values.strict ? warnings.map((w) => ({ ...w, severity: 'error' as const })) : []),
    ];
    const label = values.strict ? 'error' : 'warning';
    const warningLines = warnings.map(
      (w) => `  ${label} ${w.tool ? `tool "${w.tool}" ` : ''}at ${w.pointer || '/'}: ${w.message}`,
    );
    if (values.json) {
      printJson({
        ok,
        plugin: plugin?.name,
        ...(plugin?.file ? { file: plugin.file } : {}),
        ...(plugin?.error ? { error: { code: plugin.error.code, message: plugin.error.message } } : {}),
        violations,
        warnings: values.strict ? [] : warnings,
        tools: plugin?.tools.map((t) => t.name) ?? [],
      });
    } else if (plugin?.status === 'loaded') {
      print(
        [
          `${ok ? 'ok' : 'FAIL'}  ${plugin.name}${plugin.version ? ` ${plugin.version}` : ''}: ${plugin.tools.length} tool${plugin.tools.length === 1 ? '' : 's'} (${plugin.tools.map((t) => t.name).join(', ')})`,
          ...warningLines,
        ].join('\n'),
      );
    } else {
      print(
        [
          `FAIL  ${plugin?.name ?? target}`,
          `  ${plugin?.error?.code}: ${plugin?.error?.message.replace(/\n/g, '\n  ')}`,
          ...warningLines,
        ].join('\n'),
      );
    }
    return ok ? EXIT.ok : EXIT.failure;
  },
};

/**
 * PATH is a path when it reads as one. A config tells paths from package names by a leading `.`;
 * here, `check src/index.ts` (the file there, not a package `src`) is one too: a file name, or a
 * name with a `/` that is no `@scope/name`, when it is there.
 */
function readsAsPath(target: string, cwd: string): boolean {
  if (target.startsWith('.') || isAbsolute(target)) return true;
  const fileLike = /\.[cm]?[jt]sx?$/.test(target) || (target.includes('/') && !target.startsWith('@'));
  return fileLike && existsSync(resolve(cwd, target));
}
