/** `rousseau-host tools`: every plugin with its status and its tools. */
import type { PluginStatus } from '../types.ts';
import { EXIT, hostFromFlags, print, printJson, type Command } from './command.ts';

export const tools: Command = {
  name: 'tools',
  summary: 'List every plugin with its status (loaded / failed and why / quarantined) and its tools.',
  usage: 'tools [--json] [--strict]',
  options: { strict: { type: 'boolean' } },
  async run({ values }) {
    const host = await hostFromFlags(values, { audit: false });
    const plugins = host.plugins();
    await host.close();
    if (values.json) printJson({ plugins: plugins.map(jsonShape) });
    else print(plugins.map(describe).join('\n'));
    return values.strict && plugins.some((p) => p.status !== 'loaded') ? EXIT.failure : EXIT.ok;
  },
};

function jsonShape(p: PluginStatus) {
  return {
    name: p.name,
    source: p.source,
    ...(p.file ? { file: p.file } : {}),
    ...(p.version ? { version: p.version } : {}),
    status: p.status,
    ...(p.error ? { error: p.error } : {}),
    ...(p.warnings ? { warnings: p.warnings } : {}),
    isolation: p.isolation,
    tools: p.tools,
  };
}

function describe(p: PluginStatus): string {
  const head = `${p.name}${p.version ? ` ${p.version}` : ''}  ${p.status}  (${p.source}, ${p.isolation})`;
  if (p.error) return `${head}\n  ${p.error.code}: ${p.error.message.replace(/\n/g, '\n  ')}`;
  const width = Math.max(0, ...p.tools.map((t) => t.name.length));
  const lines = p.tools.map((t) => `  ${t.name.padEnd(width)}  ${firstLine(t.description)}`);
  const all = p.warnings ?? [];
  // A public MCP server's schemas can carry dozens (server-filesystem's: 41), which its user cannot
  // fix and which buried the tool list: a few show what they are, and the JSON keeps every one.
  const shown = all.length > WARNINGS_SHOWN + 1 ? all.slice(0, WARNINGS_SHOWN) : all;
  const warnings = shown.map(
    (w) => `  warning ${w.tool ? `tool "${w.tool}" ` : ''}at ${w.pointer || '/'}: ${w.message}`,
  );
  if (shown.length < all.length)
    warnings.push(`  … and ${all.length - shown.length} more warnings (\`tools --json\` lists every one)`);
  return [head, ...lines, ...warnings].join('\n');
}

const WARNINGS_SHOWN = 3;

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 100 ? `${line.slice(0, 97)}...` : line;
}
