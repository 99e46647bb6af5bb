/**
 * Loaded plugins and their tools. Tools are listed sorted by name, whatever order plugins finished
 * loading in, so prompts (and prompt caches) stay stable from run to run.
 */
import type { ToolAnnotations } from './contract.ts';
import { hostError, type HostError } from './errors.ts';
import type { Limiter } from './limiter.ts';
import { type CheckedValidator, validatorFor } from './shared-validators.ts';
import { hasDefaults } from './schema-defaults.ts';
import { workspacePathFields, withoutPathMarks } from './workspace-paths.ts';
import type { PluginRunner } from './runners/runner.ts';
import type { Isolation, PluginLoader, PluginStatus, ToolInfo, Violation } from './types.ts';

/** A plugin as the dispatcher sees it. */
export interface PluginHandle {
  name: string;
  source: string;
  file?: string;
  version?: string;
  isolation: Isolation;
  loader?: PluginLoader;
  runner?: PluginRunner;
  limiter: Limiter;
  timeoutMs: number;
  maxOutputBytes: number;
  loadMs?: number;
  error?: HostError & { violations?: Violation[] };
  /** Why the last reload failed while this version kept serving; cleared by the next one that succeeds. */
  reloadError?: HostError & { violations?: Violation[] };
  warnings: Violation[];
}

export interface RegisteredTool {
  info: ToolInfo;
  plugin: PluginHandle;
  timeoutMs: number;
  /** Compiled on first call: compiling every schema at start-up would tax hosts with many tools. */
  validator(): CheckedValidator;
  /** The `outputSchema`'s, compiled on first use; none when the tool declares no output schema. */
  outputValidator?(): CheckedValidator;
  /** Whether the schema declares a `default` anywhere (only then are defaults applied per call). */
  hasDefaults: boolean;
  /** Input fields naming a file in the workspace (`x-workspace-path`), rewritten to the path they name before the policy. */
  pathFields: readonly string[];
}

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: ToolAnnotations;
  timeoutMs?: number;
}

export class Registry {
  private readonly handles: PluginHandle[] = [];
  private readonly byName = new Map<string, RegisteredTool>();
  private sorted: ToolInfo[] | undefined;

  /** Adds a plugin that failed to load: it shows in `plugins()` with its reason. */
  addFailed(handle: PluginHandle): void {
    this.handles.push(handle);
  }

  /**
   * Adds a loaded plugin and its tools. A plugin name or a tool name that is taken fails this plugin
   * (the earlier one keeps it) and returns the error.
   */
  add(handle: PluginHandle, tools: readonly ToolDefinition[]): HostError | undefined {
    const owner = this.handles.find((h) => h.name === handle.name && !h.error);
    if (owner) return this.reject(handle, hostError('RH_ERR_PLUGIN_DUPLICATE', [handle.name, owner.source]));
    for (const tool of tools) {
      const taken = this.byName.get(tool.name);
      if (taken)
        return this.reject(handle, hostError('RH_ERR_TOOL_COLLISION', [tool.name, handle.name, taken.plugin.name]));
    }
    this.handles.push(handle);
    this.register(handle, tools);
    return undefined;
  }

  /**
   * Puts `next` in `old`'s place, its tools instead of old's, in one synchronous step: a call finds
   * its tool either before the swap or after it, never halfway. A plugin name or tool name that
   * another plugin holds changes nothing and returns the error. Calls that already hold `old`'s
   * tools keep them (and its runner).
   */
  replace(old: PluginHandle, next: PluginHandle, tools: readonly ToolDefinition[]): HostError | undefined {
    const index = this.handles.indexOf(old);
    if (index < 0) throw new Error(`plugin ${old.name} is not in the registry`);
    // A failed version takes no name: it only says why nothing of the plugin is served.
    const owner = !next.error && this.handles.find((h) => h !== old && h.name === next.name && !h.error);
    if (owner) return hostError('RH_ERR_PLUGIN_DUPLICATE', [next.name, owner.source]);
    for (const tool of tools) {
      const taken = this.byName.get(tool.name);
      if (taken && taken.plugin !== old)
        return hostError('RH_ERR_TOOL_COLLISION', [tool.name, next.name, taken.plugin.name]);
    }
    for (const [name, tool] of this.byName) if (tool.plugin === old) this.byName.delete(name);
    this.handles[index] = next;
    this.register(next, tools);
    return undefined;
  }

  private register(handle: PluginHandle, tools: readonly ToolDefinition[]): void {
    for (const tool of tools) {
      let compiled: CheckedValidator | undefined;
      let output: CheckedValidator | undefined;
      const { outputSchema } = tool;
      const pathFields = workspacePathFields(tool.inputSchema);
      this.byName.set(tool.name, {
        info: {
          name: tool.name,
          description: tool.description,
          inputSchema: withoutPathMarks(tool.inputSchema, pathFields),
          ...(outputSchema ? { outputSchema } : {}),
          ...(tool.annotations ? { annotations: tool.annotations } : {}),
          plugin: handle.name,
        },
        plugin: handle,
        timeoutMs: tool.timeoutMs ?? handle.timeoutMs,
        validator: () => (compiled ??= validatorFor(tool.inputSchema)),
        ...(outputSchema ? { outputValidator: () => (output ??= validatorFor(outputSchema)) } : {}),
        hasDefaults: hasDefaults(tool.inputSchema),
        pathFields,
      });
    }
    this.sorted = undefined;
  }

  get(name: string): RegisteredTool | undefined {
    return this.byName.get(name);
  }

  /** Every tool, sorted by name. */
  tools(): ToolInfo[] {
    this.sorted ??= [...this.byName.values()]
      .map((t) => t.info)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return this.sorted;
  }

  /** The names of every tool, for "unknown tool" messages. */
  names(): string[] {
    return this.tools().map((t) => t.name);
  }

  handlesList(): readonly PluginHandle[] {
    return this.handles;
  }

  /** Statuses in config order, as `tools --json` prints them. */
  plugins(): PluginStatus[] {
    return this.handles.map((h) => {
      const health = h.runner?.health?.();
      const status: PluginStatus = {
        name: h.name,
        source: h.source,
        ...(h.file ? { file: h.file } : {}),
        ...(h.version ? { version: h.version } : {}),
        status: h.error ? 'failed' : health?.quarantined ? 'quarantined' : 'loaded',
        isolation: h.isolation,
        ...(h.loader ? { loader: h.loader } : {}),
        ...(h.loadMs === undefined ? {} : { loadMs: Math.round(h.loadMs * 10) / 10 }),
        tools: this.tools()
          .filter((t) => t.plugin === h.name && !h.error)
          .map(({ name, description, inputSchema, outputSchema, annotations }) => ({
            name,
            description,
            inputSchema,
            ...(outputSchema ? { outputSchema } : {}),
            ...(annotations ? { annotations } : {}),
          })),
      };
      if (h.error) {
        status.error = {
          code: h.error.code,
          message: h.error.message,
          ...(h.error.violations ? { violations: h.error.violations } : {}),
        };
      } else if (health?.quarantined) {
        status.error = { code: 'quarantined', message: health.reason ?? 'quarantined' };
      }
      if (h.reloadError) {
        status.reloadError = {
          code: h.reloadError.code,
          message: h.reloadError.message,
          ...(h.reloadError.violations ? { violations: h.reloadError.violations } : {}),
        };
      }
      if (h.warnings.length) status.warnings = h.warnings;
      return status;
    });
  }

  private reject(handle: PluginHandle, error: HostError): HostError {
    handle.error = error;
    this.handles.push(handle);
    return error;
  }
}
