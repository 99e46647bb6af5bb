/**
 * A plugin described as plain data: what a runner (inline, worker, MCP) reports and the contract
 * check reads. Functions become their `typeof`, schemas their JSON, so a report crosses a worker
 * boundary unchanged. A leaf: it imports nothing from the host but safe-json.ts, itself a leaf.
 */
import { messageOf } from './errors.ts';
import { plainData } from './safe-json.ts';

const PLUGIN_KEYS = new Set(['name', 'version', 'description', 'options', 'tools', 'setup', 'dispose']);
const TOOL_KEYS = new Set([
  'name',
  'description',
  'inputSchema',
  'outputSchema',
  'annotations',
  'timeoutMs',
  'execute',
]);

/** The plugin's default export, described as plain data (functions become their `typeof`). */
export interface PluginReport {
  /** `typeof` of the default export, with `null` and `array` told apart. */
  exportType: string;
  name?: unknown;
  version?: unknown;
  description?: unknown;
  toolsType: string;
  setupType: string;
  disposeType: string;
  /** The options schema as JSON, when there is one. */
  options?: unknown;
  optionsError?: string;
  unknownKeys: string[];
}

/** One tool, described as plain data. */
export interface ToolReport {
  valueType: string;
  name?: unknown;
  description?: unknown;
  inputSchema?: unknown;
  /** Why the schema could not be turned into JSON (a function in it, a cycle, a BigInt). */
  inputSchemaError?: string;
  outputSchema?: unknown;
  /** Why the output schema could not be turned into JSON. */
  outputSchemaError?: string;
  annotations?: unknown;
  timeoutMs?: unknown;
  executeType: string;
  unknownKeys: string[];
}

/** `typeof`, with `null` and `array` told apart. */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** Describes an untrusted tool value as plain data for `checkTools`. */
export function describeTool(value: unknown): ToolReport {
  if (kindOf(value) !== 'object') return { valueType: kindOf(value), executeType: 'undefined', unknownKeys: [] };
  const t = value as Record<string, unknown>;
  const report: ToolReport = {
    valueType: 'object',
    name: plainField(t.name),
    description: plainField(t.description),
    annotations: plainOrUndefined(t.annotations),
    timeoutMs: plainField(t.timeoutMs),
    executeType: typeof t.execute,
    unknownKeys: Object.keys(t).filter((k) => !TOOL_KEYS.has(k)),
  };
  const schema = toPlainJson(t.inputSchema);
  if ('error' in schema) report.inputSchemaError = `inputSchema is not plain JSON: ${schema.error}`;
  else report.inputSchema = schema.value;
  if (t.outputSchema !== undefined) {
    const output = toPlainJson(t.outputSchema);
    if ('error' in output) report.outputSchemaError = `outputSchema is not plain JSON: ${output.error}`;
    else report.outputSchema = output.value;
  }
  return report;
}

/** Describes an untrusted default export as plain data for `checkPlugin`. */
export function describePlugin(value: unknown): PluginReport {
  if (kindOf(value) !== 'object') {
    return {
      exportType: kindOf(value),
      toolsType: 'undefined',
      setupType: 'undefined',
      disposeType: 'undefined',
      unknownKeys: [],
    };
  }
  const p = value as Record<string, unknown>;
  const report: PluginReport = {
    exportType: 'object',
    name: plainField(p.name),
    version: plainField(p.version),
    description: plainField(p.description),
    toolsType: kindOf(p.tools),
    setupType: typeof p.setup,
    disposeType: typeof p.dispose,
    unknownKeys: Object.keys(p).filter((k) => !PLUGIN_KEYS.has(k)),
  };
  if (p.options !== undefined) {
    const options = toPlainJson(p.options);
    if ('error' in options) report.optionsError = `options schema is not plain JSON: ${options.error}`;
    else report.options = options.value;
  }
  return report;
}

/**
 * A field as JSON carries it, so that a report made in the host's thread is plain data already and
 * the loader need not copy it again (an inline plugin's report is not cloned on its way): a string
 * or a boolean as it is, a number JSON cannot write as null, a function or a symbol left out,
 * anything else copied. A value JSON refuses (a BigInt, a cycle) throws, failing the load.
 */
function plainField(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'function':
    case 'symbol':
      return undefined;
    default:
      return plainData(value);
  }
}

function plainOrUndefined(value: unknown): unknown {
  if (value === undefined) return undefined;
  const plain = toPlainJson(value);
  return 'error' in plain ? String(value) : plain.value;
}

/** A deep copy as JSON would carry it, or why it cannot be one. */
function toPlainJson(value: unknown): { value: unknown } | { error: string } {
  if (value === undefined) return { value: undefined };
  try {
    return { value: plainData(value) };
  } catch (error) {
    return { error: messageOf(error) };
  }
}
