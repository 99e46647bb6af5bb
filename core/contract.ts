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
  /**
   * Asks the user for a few values (MCP's form elicitation): an MCP client with the `elicitation`
   * capability, the terminal in the REPL. Headless runs answer `cancel`. The answer's `content` has
   * been checked against `requestedSchema`. Throws when no one can be asked, when the schema is not
   * one MCP allows, when the call ends first, or while another question of this call is open. The
   * tool's timeout stands still while the user answers (docs/plugins.md, "Asking the user").
   */
  elicit(request: ElicitRequest): Promise<ElicitResult>;
  /**
   * Asks a model for one message, without tools (MCP's sampling): an MCP client with the `sampling`
   * capability, or the agent loop's own model. Throws when there is none, or when the call ends
   * first. `maxTokens` is capped (docs/plugins.md, "Asking the model").
   */
  sample(request: SampleRequest): Promise<SampleResult>;
}

/** What `ctx.elicit` asks: a message and a flat form (MCP's `requestedSchema`). */
export interface ElicitRequest {
  message: string;
  requestedSchema: ElicitSchema;
}

/** A flat object whose properties are primitive fields; nothing nests. */
export interface ElicitSchema {
  type: 'object';
  properties: Record<string, ElicitField>;
  required?: string[];
}

/**
 * One field of a form, as MCP defines them: a string (with `format` `email`, `uri`, `date` or
 * `date-time`), a number or integer, a boolean, a single choice (`enum`, or `oneOf` of
 * `{ const, title }`), or several choices (`type: 'array'` whose `items` are an `enum` or an
 * `anyOf` of `{ const, title }`). Each may have a `title`, a `description` and a `default`.
 */
export type ElicitField =
  | (FieldText & { type: 'boolean'; default?: boolean })
  | (FieldText & {
      type: 'string';
      minLength?: number;
      maxLength?: number;
      format?: 'email' | 'uri' | 'date' | 'date-time';
      default?: string;
    })
  | (FieldText & { type: 'number' | 'integer'; minimum?: number; maximum?: number; default?: number })
  | (FieldText & { type: 'string'; enum: string[]; enumNames?: string[]; default?: string })
  | (FieldText & { type: 'string'; oneOf: Choice[]; default?: string })
  | (FieldText & {
      type: 'array';
      items: { type: 'string'; enum: string[] } | { anyOf: Choice[] };
      minItems?: number;
      maxItems?: number;
      default?: string[];
    });

interface FieldText {
  title?: string;
  description?: string;
}

/** A titled choice: `const` is the value, `title` what the user reads. */
export interface Choice {
  const: string;
  title: string;
}

/** A value the user gave: a multi-select field's is an array of its choices. */
export type ElicitValue = string | number | boolean | string[];

/** The user's answer: `accept` with the values, `decline` (said no), or `cancel` (dismissed it). */
export type ElicitResult =
  | { action: 'accept'; content: Record<string, ElicitValue> }
  | { action: 'decline' | 'cancel' };

/** What `ctx.sample` asks: a conversation for the model to carry on (MCP's `sampling/createMessage`). */
export interface SampleRequest {
  messages: SampleMessage[];
  systemPrompt?: string;
  /** The most tokens the answer may have; the host caps it. */
  maxTokens: number;
}

export interface SampleMessage {
  role: 'user' | 'assistant';
  content: SampleContent;
}

/** Text; an image (base64 `data`) where the model that answers takes images. */
export type SampleContent = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string };

/** The model's answer. `stopReason` is MCP's (`endTurn`, `maxTokens`, `stopSequence`) or the model's own word. */
export interface SampleResult {
  role: 'assistant';
  content: SampleContent;
  model: string;
  stopReason?: string;
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
 * audio, resources) with an error flag and structured data (checked against `outputSchema`, and
 * typed from it: `Data` is the schema's static type).
 */
export type ToolOutput<Data = unknown> = string | { content: string | ContentBlock[]; isError?: boolean; data?: Data };

/**
 * One tool. Contract: stateless between calls (two agents may call it at once), honours
 * `ctx.signal`, reports failure by throwing, and caps what it returns.
 */
export interface Tool<
  Input extends TSchema = TSchema,
  Options = Record<string, unknown>,
  Output extends TSchema = TSchema,
> {
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
  outputSchema?: Output;
  /** Overrides the plugin's timeout for this tool. */
  timeoutMs?: number;
  execute(
    input: Static<Input>,
    ctx: ToolContext<Options>,
  ): ToolOutput<Static<Output>> | Promise<ToolOutput<Static<Output>>>;
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
export function defineTool<Input extends TSchema, Options = Record<string, unknown>, Output extends TSchema = TSchema>(
  tool: Tool<Input, Options, Output>,
): Tool<Input, Options, Output> {
  return tool;
}

/**
 * `defineTool` for the tools of a plugin with an `options` schema: their `ctx.options` has the
 * schema's type (with `defineTool` alone it is `Record<string, unknown>`).
 * @example const tool = defineToolFor(Options); tool({ name, description, inputSchema, execute: (input, ctx) => ctx.options.units })
 */
export function defineToolFor<OptionsSchema extends TSchema>(
  _options: OptionsSchema,
): <Input extends TSchema, Output extends TSchema = TSchema>(
  tool: Tool<Input, Static<OptionsSchema>, Output>,
) => Tool<Input, Static<OptionsSchema>, Output> {
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
