/**
 * The sandbox-side half of loading: from a module's default export to live tools and the reports the
 * contract check reads. The same code runs in the host's thread (inline) and in a worker.
 */
import { describePlugin, describeTool, kindOf } from '../plugin-report.ts';
import type { TSchema } from 'typebox';
import type { Plugin, PluginLogger, Tool } from '../contract.ts';
import { hostError, messageOf } from '../errors.ts';
import { copyJsonValue, emptyRecord } from '../safe-json.ts';
import type { SchemaProblem } from '../schema-errors.ts';
import type { LoadedPlugin } from './runner.ts';

export interface InstanceContext {
  /** The plugin's name in messages before its own name is known: the specifier. */
  source: string;
  options: unknown;
  workspace: string;
  log: PluginLogger;
  signal: AbortSignal;
}

export interface PluginInstance extends LoadedPlugin {
  /** The tools by name, when the plugin could be instantiated. */
  live: Map<string, Tool>;
  /** The validated options, defaults applied: what `ctx.options` carries. */
  options: unknown;
  dispose?: () => unknown;
}

/**
 * Validates options, runs `setup` when there is one, and describes everything for the check.
 * Throws `HostError` (options invalid, setup threw); a broken shape is left for the check to report.
 */
export async function instantiatePlugin(exported: unknown, ctx: InstanceContext): Promise<PluginInstance> {
  const plugin = describePlugin(exported);
  const instance: PluginInstance = { plugin, tools: null, live: new Map(), options: ctx.options ?? emptyRecord() };
  if (plugin.exportType !== 'object') return instance;
  const p = exported as Plugin;
  const label = typeof p.name === 'string' ? p.name : ctx.source;

  if (plugin.options !== undefined && !plugin.optionsError) {
    instance.options = await validateOptions(label, plugin.options, ctx.options);
  }

  let tools: unknown = p.tools;
  if (plugin.toolsType === 'undefined' && plugin.setupType === 'function') {
    try {
      tools = await p.setup!({
        options: instance.options as never,
        log: ctx.log,
        workspace: ctx.workspace,
        signal: ctx.signal,
      });
    } catch (error) {
      throw hostError('RH_ERR_PLUGIN_SETUP', [label, messageOf(error)], error);
    }
    if (!Array.isArray(tools)) {
      throw hostError('RH_ERR_PLUGIN_SETUP', [label, `setup() must return an array of tools, got ${kindOf(tools)}`]);
    }
  }
  if (Array.isArray(tools)) {
    instance.tools = tools.map(describeTool);
    for (const tool of tools as Tool[]) {
      if (kindOf(tool) === 'object' && typeof tool.name === 'string' && !instance.live.has(tool.name))
        instance.live.set(tool.name, tool);
    }
  }
  if (plugin.disposeType === 'function') instance.dispose = () => p.dispose!();
  return instance;
}

async function validateOptions(label: string, schema: unknown, given: unknown): Promise<unknown> {
  // Loaded only for a plugin with options: in a worker, typebox is ~1.3 MiB of each plugin's memory,
  // and the code that fills defaults and words the errors ~0.2 MiB.
  const [{ checkedLinearSchema }, { interpretSchema }, { applyDefaults }] = await Promise.all([
    import('../schema-patterns.ts'),
    import('../schema-validator.ts'),
    import('../schema-defaults.ts'),
  ]);
  let linear: TSchema;
  try {
    linear = checkedLinearSchema(schema);
  } catch {
    return given; // the check reports the regex that cannot run linear
  }
  let value: unknown;
  try {
    // A copy whose objects inherit nothing: what `ctx.options` lacks reads as undefined in the tool.
    value = applyDefaults(schema, copyJsonValue(given ?? {}));
  } catch (error) {
    throw hostError('RH_ERR_PLUGIN_OPTIONS', [label, `  options${messageOf(error)}`]);
  }
  // Options are checked once, at load: the schema is interpreted, since compiling it would cost
  // several times the check. Its errors are worked out on the same budget as a tool's input.
  const validator = interpretSchema(linear);
  let problems: SchemaProblem[];
  try {
    if (validator.Check(value)) return value;
    problems = validator.problems(value, linear);
  } catch (error) {
    // A schema typebox accepts may still fail on a value (a `$ref` that refers to itself): the
    // options are then unchecked, and setup must not get them.
    throw hostError('RH_ERR_PLUGIN_OPTIONS', [
      label,
      `  options cannot be checked against the plugin's options schema: ${messageOf(error)}`,
    ]);
  }
  const lines = problems.map((p) => `  options${p.pointer}: ${p.message}`);
  throw hostError('RH_ERR_PLUGIN_OPTIONS', [label, lines.join('\n')]);
}
