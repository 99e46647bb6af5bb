/**
 * The shapes the host hands to its callers: call options and results, plugin statuses, tool
 * listings. A leaf: no run-time imports.
 */
import type {
  ContentBlock,
  ElicitRequest,
  ElicitResult,
  SampleRequest,
  SampleResult,
  ToolAnnotations,
} from './contract.ts';
import type { HostErrorCode, ResultCode } from './errors.ts';
import type { LogLevel } from './log.ts';
import type { PolicyDecision } from './policy.ts';

export type Isolation = 'inline' | 'worker' | 'process';

/** What imported a plugin's module: Node's own loader (`native`) or jiti (docs/plugins.md, "How a plugin is loaded"). */
export type PluginLoader = 'native' | 'jiti';

/** Options of one `host.call()`. */
export interface CallOptions {
  /** Cancels the call; the result is then `cancelled`. */
  signal?: AbortSignal;
  /** Defaults to a random UUID. */
  callId?: string;
  sessionId?: string;
  /** Progress reported by the tool (`ctx.progress`). */
  onProgress?: (progress: Progress) => void;
  /**
   * Each `ctx.log` entry of this call, at every level, whatever the host's log level (the host's
   * logger still gets them, filtered by its level). What a caller does with one must not throw.
   */
  onLog?: (entry: LogEntry) => void;
  /**
   * Who asked for the call, when a transport authenticated them (docs/serve.md). Policy rules may
   * name callers and scopes; the audit records the caller's name on every line of the call.
   */
  caller?: Caller;
  /** Answers this call's `ask` decisions (and its `ctx.authorize` questions) instead of the host's `approve`. */
  approve?: ApproveFn;
  /** Puts the tool's `ctx.elicit` questions to the user. Without it `ctx.elicit` throws: no one can be asked. */
  elicit?: ElicitHandler;
  /** Answers the tool's `ctx.sample` requests with a model. Without it `ctx.sample` throws. */
  sample?: SampleHandler;
  /**
   * Told when the tool starts to run for this call (it holds a concurrency slot of its plugin); the
   * function it returns is told once the tool has stopped. That may be after the call's result: a
   * cancelled or timed-out tool runs on until its runner is done with it (an inline tool that
   * ignores its signal, until it returns, or is given up on a full timeout later). Not told for a
   * call whose tool never ran. Neither may throw. `serve.limits.inFlight` holds a place by it.
   */
  onRun?: () => () => void;
}

/** A call that has just ended, as `host.onCallEnd` listeners hear of it. */
export interface CallEnd {
  callId: string;
  /** The tool asked for: a name no plugin has when the result is `unknown_tool`. */
  tool: string;
  /** The plugin of the tool, when the tool was found. */
  plugin?: string;
  caller?: Caller;
  result: CallResult;
}

/**
 * Asks a person whether a call may run. `always` approves this exact input for the session.
 * `answeredBy` names who answers (`terminal`, `mcp-client`) in the audit trail.
 */
export interface ApproveFn {
  (request: ApprovalRequest): Promise<boolean | 'always'> | boolean | 'always';
  readonly answeredBy?: string;
}

export interface ApprovalRequest {
  tool: ToolInfo;
  /** The canonical JSON of the validated input: what the tool will receive. */
  input: string;
  decision: PolicyDecision;
  callId: string;
  sessionId?: string;
}

/** Which call a question comes from; `signal` aborts when the call ends (its answer is then dropped). */
export interface Asking {
  tool: string;
  callId: string;
  sessionId?: string;
  signal: AbortSignal;
}

/** Puts a validated `ctx.elicit` request to the user; the host checks the answer against the form. */
export type ElicitHandler = (request: ElicitRequest, from: Asking) => Promise<ElicitResult>;

/** Answers a validated `ctx.sample` request (`maxTokens` already capped); the host checks the answer's shape. */
export type SampleHandler = (request: SampleRequest, from: Asking) => Promise<SampleResult>;

/** An authenticated caller: a token's name or a JWT's subject, and the scopes it was granted. */
export interface Caller {
  name: string;
  scopes: readonly string[];
  /** How the caller proved who they are. */
  via: 'token' | 'oauth';
}

/** One `ctx.log.<level>(message, data)` of a tool. */
export interface LogEntry {
  level: LogLevel;
  message: string;
  data?: Record<string, unknown>;
}

export interface Progress {
  done: number;
  total?: number;
  message?: string;
}

/** The one result of every call. `call()` never throws. */
export interface CallResult {
  isError: boolean;
  /** Text for the model: the tool's output, or what went wrong and how to retry. */
  content: string;
  /** Set when `isError`: why the call failed. */
  code?: ResultCode;
  durationMs: number;
  /** The content was cut to the plugin's output cap (head + tail kept, a marker between). */
  truncated?: boolean;
  /** Structured data the tool returned beside its text (matching its `outputSchema`, when it has one). */
  data?: unknown;
  /**
   * The data's JSON was over the plugin's output cap: its long strings were cut (head and tail
   * kept), or, when that was not enough, it was left out and `content` says so.
   */
  dataTruncated?: boolean;
  /**
   * The result as content blocks, when the tool returned blocks (images, audio, resources):
   * `content` is then their text, with each other block named in it (docs/plugins.md, "Results").
   */
  blocks?: ContentBlock[];
}

/** A violation of the tool contract, found when a plugin loads. */
export interface Violation {
  /** The plugin's file. */
  file: string;
  /** The tool concerned, when the violation is about one tool. */
  tool?: string;
  /** JSON pointer into the plugin's export (`/tools/0/inputSchema/properties/city`). */
  pointer: string;
  message: string;
  /** Style rules only warn for MCP tools. */
  severity: 'error' | 'warning';
}

export type PluginState = 'loaded' | 'failed' | 'quarantined';

export interface ToolInfo {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The JSON Schema of the tool's `data`, when it declares one (an object schema). */
  outputSchema?: Record<string, unknown>;
  annotations?: ToolAnnotations;
  /** The plugin the tool belongs to. */
  plugin: string;
}

/** One plugin as `tools --json` shows it. */
export interface PluginStatus {
  name: string;
  /** The specifier as written in the config (or `builtin:fs`). */
  source: string;
  /** The resolved file, when it resolved. */
  file?: string;
  version?: string;
  status: PluginState;
  /** Why it is not loaded: the load's `HostError`, or `quarantined` while it rests. */
  error?: { code: HostErrorCode | 'quarantined'; message: string; violations?: Violation[] };
  /** Why the last reload failed: the version loaded before it still serves (docs/plugins.md, "Watch mode"). */
  reloadError?: { code: HostErrorCode; message: string; violations?: Violation[] };
  warnings?: Violation[];
  isolation: Isolation;
  /** What imported the module; none for an MCP server. */
  loader?: PluginLoader;
  loadMs?: number;
  tools: Pick<ToolInfo, 'name' | 'description' | 'inputSchema' | 'outputSchema' | 'annotations'>[];
}
