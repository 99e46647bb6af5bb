/**
 * The host's tools as a model sees them. Anthropic and OpenAI both accept tool names matching
 * `^[a-zA-Z0-9_-]{1,64}$` only; plugin tools already do (the contract), but tools from MCP servers
 * may carry dots or longer names, so each tool gets a wire name and calls map back through it.
 * Schemas are copied through JSON so TypeBox's symbol keys never reach a wire format; each provider
 * then shapes them (`input_schema` vs `parameters`) in its own file.
 */
import { providerSafeName, unusedName } from '../tool-names.ts';
import type { ToolInfo } from '../types.ts';
import type { ToolSpec } from './messages.ts';

export interface ToolSet {
  specs: ToolSpec[];
  /** The host's name of a tool the model called by its wire name; unknown names pass through (the host answers `unknown_tool`). */
  hostName(wireName: string): string;
}

export function projectTools(tools: readonly ToolInfo[]): ToolSet {
  const toHost = new Map<string, string>();
  const specs = tools.map((tool): ToolSpec => {
    const wire = unusedName(providerSafeName(tool.name) || 'tool', toHost);
    toHost.set(wire, tool.name);
    return { name: wire, description: tool.description, inputSchema: objectSchema(tool.inputSchema) };
  });
  return { specs, hostName: (wire) => toHost.get(wire) ?? wire };
}

/** A plain-JSON copy of the schema with an object root and a `properties` map (OpenAI rejects an object schema without one). */
function objectSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  delete copy.$schema;
  delete copy.$id;
  return { ...copy, type: 'object', properties: copy.properties ?? {} };
}
