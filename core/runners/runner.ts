/**
 * The contract between the dispatcher and the place a plugin runs (inline, worker, process).
 *
 * The dispatcher owns the call's timeout and cancellation: it aborts `RunRequest.signal` (with a
 * `TimeoutError` DOMException on timeout) and stops waiting at once. A runner reacts to that abort
 * as its isolation allows: inline can only signal; an isolated runner kills the worker or process.
 */
import type { Authorization, ElicitResult, SampleResult } from '../contract.ts';
import type { PluginReport, ToolReport } from '../plugin-report.ts';
import type { Isolation, LogEntry, PluginLoader, Progress, Violation } from '../types.ts';
import type { QuarantinePolicy } from './crash-budget.ts';

/** A plugin entry after the loader resolved it: everything a runner needs to start it. */
export interface PluginSpec {
  /** The specifier as written (`./my-tool`, `rousseau-plugin-x`, `builtin:fs`). */
  source: string;
  /** The resolved module file. */
  file: string;
  options: unknown;
  isolation: Isolation;
  workspace: string;
  loadTimeoutMs: number;
  /** Heap cap of an isolated plugin, in MiB. */
  memoryMb: number;
  /** Isolated runners: after `failures` crashes or timeouts within `windowMs`, calls fail fast for `cooldownMs`. */
  quarantine: QuarantinePolicy;
  /** The clock the crash budget of a worker or process plugin reads (`HostOptions.clock`). */
  clock?: () => number;
  logLevel: string;
  /** A reload: import the module and its local imports anew, not from the module cache (inline; an isolate is new anyway). */
  fresh?: boolean;
  /** Set when the plugin is an MCP server rather than a module (`file` is then the source). */
  mcp?: McpServerSpec;
}

/** An MCP server run as a plugin: its tools are prefixed with `name`; `command` (stdio) or `url` (HTTP). */
export interface McpServerSpec {
  name: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  /** Absolute: the loader resolves it against the config's directory. */
  cwd?: string;
  url?: string;
}

/** What loading a plugin yields: reports for the contract check, and the live tools when inline. */
export interface LoadedPlugin {
  plugin: PluginReport;
  /** `null` when the export was too broken to list tools. */
  tools: ToolReport[] | null;
  /** Problems the runner found that the contract check cannot see (MCP tool names that collided). */
  warnings?: Violation[];
  /** What imported the module (not told by an MCP server). */
  loader?: PluginLoader;
}

export interface RunRequest {
  tool: string;
  input: unknown;
  callId: string;
  sessionId?: string;
  /** Aborts on timeout (a `TimeoutError`), cancellation and host close. Made on first read. */
  signal: AbortSignal;
  /** Whether the call was stopped; reading it costs nothing, unlike `signal`. */
  readonly stopped: boolean;
  /** The tool's time limit in ms: also how long a cancelled tool has to stop before it counts as timed out. */
  readonly timeoutMs: number;
  /**
   * Sets the one listener told (once) when the call is stopped; then `signal` carries the reason.
   * A runner that only needs to react uses this: an AbortController and a listener per call cost
   * more than a worker round trip's own overhead.
   */
  whenStopped(listener: () => void): void;
  onProgress?: (progress: Progress) => void;
  /** Each `ctx.log` entry of the call, at every level (`CallOptions.onLog`). */
  onLog?: (entry: LogEntry) => void;
  /** `ctx.authorize`: the policy's verdict on another input for this tool, within this call. */
  authorize(input: unknown): Promise<Authorization>;
  /** `ctx.elicit`, checked and answered by the call's handler; rejects with an Error the tool may show. */
  elicit(request: unknown): Promise<ElicitResult>;
  /** `ctx.sample`, checked and answered by the call's handler; rejects with an Error the tool may show. */
  sample(request: unknown): Promise<SampleResult>;
}

/** How a run ended, before the dispatcher normalises it into a `CallResult`. */
export type RunOutcome =
  | { ok: true; output: unknown }
  | { ok: false; code: 'tool_error' | 'timeout' | 'quarantined'; message: string }
  /** `retry: false`: the host already ran it a second time, or cannot run it again; the model is told not to. */
  | { ok: false; code: 'crashed'; message: string; retry?: false };

export interface PluginRunner {
  readonly isolation: Isolation;
  /** Imports, validates options, runs `setup`, describes the tools. Throws `HostError` on failure. */
  load(): Promise<LoadedPlugin>;
  run(request: RunRequest): Promise<RunOutcome>;
  /** Calls `dispose`, ends threads or processes. Never throws. */
  close(): Promise<void>;
  /** Isolated runners: whether the plugin is quarantined after repeated crashes or timeouts. */
  health?(): PluginHealth;
}

export interface PluginHealth {
  quarantined: boolean;
  reason?: string;
  /** Epoch ms when the quarantine ends. */
  until?: number;
}

/**
 * How many `ctx.authorize` questions one call may ask. Each is judged, may prompt the user and
 * writes an audit line: without a budget a plugin could flood the approver and the audit trail
 * from a single call. http_get needs at most MAX_REDIRECTS (10); past the budget the answer is no.
 */
export const MAX_AUTHORIZE_PER_CALL = 64;

/** `ctx.authorize` once the budget of a call is spent. */
export const AUTHORIZE_BUDGET_SPENT: Authorization = Object.freeze({
  allowed: false,
  message: `a call may ask at most ${MAX_AUTHORIZE_PER_CALL} questions with ctx.authorize`,
});

/** `ctx.authorize` once the host has answered the call: nothing more is allowed. */
export const CALL_ENDED: Authorization = Object.freeze({ allowed: false, message: 'the call has ended' });

/** The abort reason the dispatcher uses on timeout. */
export { timeoutReason } from '../abortable.ts';

export function isTimeout(signal: AbortSignal): boolean {
  return signal.aborted && (signal.reason as { name?: string } | undefined)?.name === 'TimeoutError';
}
