/**
 * The load-time contract check (docs/plugins.md; also `rousseau-host check`).
 *
 * It runs on a *report* of the plugin, plain data that crosses a worker boundary, so the same check
 * serves inline, worker and MCP plugins. It returns every violation at once, each with the file, the
 * tool and a JSON pointer, so an author fixes them in one pass.
 */
import { MAX_TIMEOUT_MS } from './deadlines.ts';
import { escapeSegment } from './json-pointer.ts';
import { kindOf, type PluginReport, type ToolReport } from './plugin-report.ts';
import { type AddViolation, checkObjectSchema, checkSchema, openSchemas } from './schema-check.ts';
import type { Violation } from './types.ts';

export const PLUGIN_NAME = /^[a-z][a-z0-9-]{0,63}$/;
export const TOOL_NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const ANNOTATION_FLAGS = ['readOnly', 'destructive', 'idempotent', 'openWorld'];

export interface CheckOptions {
  /** MCP tools: style rules (descriptions) only warn, since the user does not own the server. */
  lenient?: boolean;
}

/** Checks the plugin's shape and, when they could be listed, its tools. */
export function checkPlugin(
  file: string,
  plugin: PluginReport,
  tools: readonly ToolReport[] | null,
  options: CheckOptions = {},
): Violation[] {
  const out: Violation[] = [];
  const add = (pointer: string, message: string, severity: Violation['severity'] = 'error') =>
    out.push({ file, pointer, message, severity });

  if (plugin.exportType !== 'object') {
    add(
      '',
      plugin.exportType === 'undefined'
        ? 'the module has no default export: export the plugin with `export default definePlugin({ name, version, tools })`'
        : `the default export must be a plugin object ({ name, version, tools | setup }), got ${plugin.exportType}`,
    );
    return out;
  }
  if (typeof plugin.name !== 'string' || !PLUGIN_NAME.test(plugin.name)) {
    add('/name', `plugin name must match ${PLUGIN_NAME.source}, got ${JSON.stringify(plugin.name) ?? 'undefined'}`);
  }
  if (typeof plugin.version !== 'string' || !SEMVER.test(plugin.version)) {
    add(
      '/version',
      `version must be a semantic version such as "1.0.0", got ${JSON.stringify(plugin.version) ?? 'undefined'}`,
    );
  }
  if (plugin.description !== undefined && typeof plugin.description !== 'string') {
    add('/description', 'description must be a string');
  }
  if (plugin.toolsType === 'undefined' && plugin.setupType === 'undefined') {
    add('/tools', 'a plugin needs `tools` (an array) or `setup` (a function returning the tools)');
  }
  if (plugin.toolsType !== 'undefined' && plugin.toolsType !== 'array') {
    add('/tools', `tools must be an array, got ${plugin.toolsType}`);
  }
  if (plugin.setupType !== 'undefined' && plugin.setupType !== 'function') {
    add('/setup', `setup must be a function, got ${plugin.setupType}`);
  }
  if (plugin.disposeType !== 'undefined' && plugin.disposeType !== 'function') {
    add('/dispose', `dispose must be a function, got ${plugin.disposeType}`);
  }
  if (plugin.optionsError) add('/options', plugin.optionsError);
  else if (plugin.options !== undefined) checkSchema(plugin.options, '/options', add, { lenient: true });
  for (const key of plugin.unknownKeys)
    add(`/${escapeSegment(key)}`, `unknown plugin key "${key}" (a typo?)`, 'warning');

  if (tools) out.push(...checkTools(file, tools, options));
  if (tools?.length === 0)
    add(
      '/tools',
      'the plugin has no tools: it loads, and serves nothing (did setup() return an empty list?)',
      'warning',
    );
  return out;
}

/** Checks each tool of one plugin; names must be unique within it. */
function checkTools(file: string, tools: readonly ToolReport[], options: CheckOptions = {}): Violation[] {
  const out: Violation[] = [];
  const seen = new Map<string, number>();
  tools.forEach((tool, index) => {
    const toolName = typeof tool.name === 'string' ? tool.name : undefined;
    const base = `/tools/${index}`;
    const add = (pointer: string, message: string, severity: Violation['severity'] = 'error') =>
      out.push({
        file,
        ...(toolName === undefined ? {} : { tool: toolName }),
        pointer: base + pointer,
        message,
        severity,
      });
    const style: Violation['severity'] = options.lenient ? 'warning' : 'error';

    if (tool.valueType !== 'object') {
      add('', `a tool must be an object ({ name, description, inputSchema, execute }), got ${tool.valueType}`);
      return;
    }
    if (toolName === undefined || !TOOL_NAME.test(toolName)) {
      add(
        '/name',
        `tool name must match ${TOOL_NAME.source} (safe for every provider), got ${JSON.stringify(tool.name) ?? 'undefined'}`,
      );
    } else if (seen.has(toolName)) {
      add('/name', `duplicate tool name "${toolName}" (also /tools/${seen.get(toolName)})`);
    } else {
      seen.set(toolName, index);
    }
    if (typeof tool.description !== 'string' || tool.description.trim() === '') {
      add(
        '/description',
        'description must be a non-empty string: the model reads it to decide when and how to call the tool',
        style,
      );
    }
    if (tool.inputSchemaError) {
      add('/inputSchema', tool.inputSchemaError);
    } else {
      checkObjectSchema(tool.inputSchema, '/inputSchema', add, style, 'providers require it');
      // An MCP server's schemas are not the user's to tighten.
      if (!options.lenient) openSchemas(tool.inputSchema, '/inputSchema', add);
    }
    if (tool.outputSchemaError) add('/outputSchema', tool.outputSchemaError);
    // Undescribed output properties only warn: the model reads the data, never writes it.
    else if (tool.outputSchema !== undefined)
      checkObjectSchema(tool.outputSchema, '/outputSchema', add, 'warning', "MCP's structuredContent is an object");
    if (tool.executeType !== 'function' && !options.lenient) {
      add('/execute', `execute must be a function, got ${tool.executeType}`);
    }
    if (
      tool.timeoutMs !== undefined &&
      !(
        Number.isInteger(tool.timeoutMs) &&
        (tool.timeoutMs as number) > 0 &&
        (tool.timeoutMs as number) <= MAX_TIMEOUT_MS
      )
    ) {
      add(
        '/timeoutMs',
        `timeoutMs must be a positive integer of at most ${MAX_TIMEOUT_MS} (about 24.8 days), got ${JSON.stringify(tool.timeoutMs)}`,
      );
    }
    checkAnnotations(tool.annotations, add);
    for (const key of tool.unknownKeys) add(`/${escapeSegment(key)}`, `unknown tool key "${key}" (a typo?)`, 'warning');
  });
  return out;
}

function checkAnnotations(annotations: unknown, add: AddViolation): void {
  if (annotations === undefined) return;
  if (kindOf(annotations) !== 'object') {
    add('/annotations', `annotations must be an object, got ${kindOf(annotations)}`);
    return;
  }
  const a = annotations as Record<string, unknown>;
  for (const flag of ANNOTATION_FLAGS) {
    if (a[flag] !== undefined && typeof a[flag] !== 'boolean') add(`/annotations/${flag}`, `${flag} must be a boolean`);
  }
  if (a.title !== undefined && typeof a.title !== 'string') add('/annotations/title', 'title must be a string');
  for (const key of Object.keys(a)) {
    if (key !== 'title' && !ANNOTATION_FLAGS.includes(key))
      add(`/annotations/${escapeSegment(key)}`, `unknown annotation "${key}"`, 'warning');
  }
}
