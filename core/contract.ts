/**
 * The tool contract: what a plugin exports and what a tool promises.
 *
 * This file is a leaf: it imports nothing from the host at run time, so a plugin may import it (via
 * `rousseau-host`) from any copy of the host, or not at all; a plain object of the same shape is
 * just as valid. `definePlugin`, `defineTool` and `defineConfig` exist only for type inference.
 */
import type { Static, TSchema } from 'typebox';
import type { HostConfig } from './config-schema.ts';

/** Hints that describe a tool's effects; they feed the approval policy's defaults and MCP annotations. */
export interface ToolAnnotations {
  /** A short human title (MCP `title`). */
  title?: string;
  /** The tool does not change anything outside itself. Read-only tools follow `policy.readOnlyDefault`. */
  readOnly?: boolean;
  /** The tool may destroy or overwrite data. */
  destructive?: boolean;
  /** Repeating a call with the same input has no further effect. */
  idempotent?: boolean;
  /** The tool reaches the outside world (network, other systems). */
  openWorld?: boolean;
}

/** The logger a plugin receives: a winston child logger on the host side, a relay in a worker. */
export interface PluginLogger {
  error(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  debug(message: string, meta?: Record<string, unknown>): void;
}

/** What a tool's `execute` receives beside its validated input. */
export interface ToolContext<Options = Record<string, unknown>> {
  /** Aborts on timeout, on cancellation and when the host closes. Honour it. */
  readonly signal: AbortSignal;
  /** A logger scoped to the plugin and the call (stderr, never stdout). */
  readonly log: PluginLogger;
  /** The plugin's options, validated against its `options` schema, defaults applied. */
  readonly options: Options;
  /** A unique id of this call (audit log, MCP request). */
  readonly callId: string;
  /** The session the call belongs to, when the caller gave one. */
  readonly sessionId?: string;
  /** The workspace root: file tools are confined to it, commands run in it. */
  readonly workspace: string;
  /** Report progress: shown by the CLI, sent as MCP progress notifications. */
  progress(done: number, total?: number, message?: string): void;
  /**
   * Asks the host whether this tool may act on another input, as if the model had called it with
   * that input: the same validation, canonical form and policy rules, an `ask` put to the approver
   * (a denial when there is none), and a `decision` line in the audit trail under this call's id.
   * For a tool that finds, while it runs, a further step its input did not name (a redirect to
   * follow, a link, a path it derives): the step must get no further than a call could. Never throws.
   */
  authorize(input: unknown): Promise<Authorization>;
}

/** The host's answer to `ctx.authorize`. */
export type Authorization =
  | { allowed: true }
  /** `message` says why, naming the rule; `rule` is its id (`policy.deny[0]`) when a rule decided. */
  | { allowed: false; message: string; rule?: string };

/**
 * One block of a result, as MCP carries it (docs/plugins.md, "Results"). Binary `data` is base64;
 * `resource_link` points at a resource, `resource` embeds one (text or base64 `blob`).
 */
export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | { type: 'resource_link'; uri: string; name: string; mimeType?: string; description?: string }
  | { type: 'resource'; resource: EmbeddedResource };

export interface EmbeddedResource {
  uri: string;
  mimeType?: string;
  text?: string;
  /** Base64. */
  blob?: string;
}

/**
 * What `execute` may return: text for the model, or its content (text, or content blocks: images,
 * audio, resources) with an error flag and structured data (checked against `outputSchema`).
 */
export type ToolOutput = string | { content: string | ContentBlock[]; isError?: boolean; data?: unknown };

/**
 * One tool. Contract: stateless between calls (two agents may call it at once), honours
 * `ctx.signal`, reports failure by throwing, and caps what it returns.
 */
export interface Tool<Input extends TSchema = TSchema, Options = Record<string, unknown>> {
  /** `^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`: safe for every provider. Unique across all loaded plugins. */
  name: string;
  /** Model-facing: what it does, each input, the output's shape, the limits. */
  description: string;
  /** A JSON-Schema object (`type: "object"`), every property described. */
  inputSchema: Input;
  annotations?: ToolAnnotations;
  /**
   * The shape of the `data` the tool returns: an object schema (MCP's rule). Each result's `data`
   * is checked against it, and MCP clients receive it as `structuredContent`.
   */
  outputSchema?: TSchema;
  /** Overrides the plugin's timeout for this tool. */
  timeoutMs?: number;
  execute(input: Static<Input>, ctx: ToolContext<Options>): ToolOutput | Promise<ToolOutput>;
}

/** What `setup` receives: the validated options and the host's services. */
export interface PluginSetupContext<Options = Record<string, unknown>> {
  readonly options: Options;
  readonly log: PluginLogger;
  readonly workspace: string;
  /** Aborts when loading times out or the host closes. */
  readonly signal: AbortSignal;
}

/** A plugin module's default export. */
export interface Plugin<OptionsSchema extends TSchema = TSchema> {
  /** `^[a-z][a-z0-9-]{0,63}$`, unique among loaded plugins. */
  name: string;
  /** Semantic version, e.g. `1.0.0`. */
  version: string;
  description?: string;
  /** A TypeBox schema for the options given in the config; they are validated before `setup`. */
  options?: OptionsSchema;
  /** The tools, when they do not depend on options. */
  tools?: Tool<TSchema, Static<OptionsSchema>>[];
  /** Builds the tools from validated options. Either `tools` or `setup` is required. */
  setup?(
    ctx: PluginSetupContext<Static<OptionsSchema>>,
  ): Tool<TSchema, Static<OptionsSchema>>[] | Promise<Tool<TSchema, Static<OptionsSchema>>[]>;
  /** Called once when the host closes. */
  dispose?(): void | Promise<void>;
}

/**
 * Types a tool; returns it unchanged.
 * @example defineTool({ name: 'echo', description: 'Echo the text back.', inputSchema: Type.Object({ text: Type.String({ description: 'Text.' }) }), execute: ({ text }) => text })
 */
export function defineTool<Input extends TSchema, Options = Record<string, unknown>>(
  tool: Tool<Input, Options>,
): Tool<Input, Options> {
  return tool;
}

/**
 * `defineTool` for the tools of a plugin with an `options` schema: their `ctx.options` has the
 * schema's type (with `defineTool` alone it is `Record<string, unknown>`).
 * @example const tool = defineToolFor(Options); tool({ name, description, inputSchema, execute: (input, ctx) => ctx.options.units })
 */
export function defineToolFor<OptionsSchema extends TSchema>(
  _options: OptionsSchema,
): <Input extends TSchema>(tool: Tool<Input, Static<OptionsSchema>>) => Tool<Input, Static<OptionsSchema>> {
  return (tool) => tool;
}

/** Types a plugin; returns it unchanged. */
export function definePlugin<OptionsSchema extends TSchema = TSchema>(
  plugin: Plugin<OptionsSchema>,
): Plugin<OptionsSchema> {
  return plugin;
}

/** Types a `rousseau.config.ts`; returns it unchanged. */
export function defineConfig(config: HostConfig): HostConfig {
  return config;
}
