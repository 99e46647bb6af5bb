// What the MCP server tests share: reading a tool result and the audit trail, and a second host
// that loads the served one as an MCP plugin by URL.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { HostConfig } from '../../core/config-schema.ts';
import { createHost, type Host } from '../../core/host.ts';
import { capturingLogger, FIXTURES } from '../helpers.ts';

type PluginEntry = NonNullable<HostConfig['plugins']>[number];

/** The text of a tool result's first block. */
export const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

/** The host's result code of a tool result (`_meta`), absent on a success. */
export const code = (r: unknown) => (r as CallToolResult)._meta?.['rousseau-host/code'];

/** `tool:code` of each audited call, in order. */
export function auditCodes(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { tool?: string; code?: string })
    .map((l) => `${l.tool}:${l.code}`);
}

/**
 * A host that allows every call, with these plugins (paths relative to test/fixtures/mcp); `config`
 * adds to its config or replaces its policy. Its log is kept off the test output: the fixtures log at
 * every level on purpose, and the tests read those lines where a client receives them.
 */
export function allowingHost(
  plugins: PluginEntry[],
  audit: string | false = false,
  config: Omit<HostConfig, 'plugins'> = {},
): Promise<Host> {
  return createHost({
    cwd: join(FIXTURES, 'mcp'),
    audit,
    logger: capturingLogger('error').logger,
    config: { builtins: false, plugins, policy: { default: 'allow' }, ...config },
  });
}

/** A host whose one plugin, `remote`, is the MCP server at `url`. */
export const hostOfRemote = (url: string) => allowingHost([{ name: 'remote', mcp: { url } }]);
