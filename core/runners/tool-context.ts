/**
 * The `ctx` a tool's `execute` receives, in every isolation. A runner supplies the call's side of it
 * (a `CallPort`): the inline runner answers from the dispatcher's request, the worker entry relays to
 * the host over its channel. Everything a tool sees is built here, so it is the same everywhere.
 */
import type {
  Authorization,
  ElicitRequest,
  ElicitResult,
  PluginLogger,
  SampleRequest,
  SampleResult,
  ToolContext,
} from '../contract.ts';
import type { LogLevel } from '../log.ts';
import type { LogEntry, Progress } from '../types.ts';

/** The call as the runner sees it: where `ctx`'s signal, log lines, progress and questions go. */
export interface CallPort {
  readonly tool: string;
  readonly callId: string;
  readonly sessionId?: string;
  /** Read only when the tool reads `ctx.signal`: a runner may make it then. */
  readonly signal: AbortSignal;
  log(level: LogLevel, message: string, data?: Record<string, unknown>): void;
  progress(progress: Progress): void;
  authorize(input: unknown): Promise<Authorization>;
  elicit(request: unknown): Promise<ElicitResult>;
  sample(request: unknown): Promise<SampleResult>;
}

/** The most characters of a progress message kept; the rest is dropped. */
const MAX_PROGRESS_MESSAGE_CHARS = 1024;

/**
 * A progress report, without the fields that were not given (it is sent as JSON as it is). Every
 * runner builds the reports it relays here, so the message is cut the same whoever sent it (a
 * plugin in any isolation, an MCP server): each report goes to the terminal and to every MCP
 * client of the host, as often as the tool sends one.
 */
export function progressOf(done: number, total?: number, message?: unknown): Progress {
  const progress: Progress = { done };
  if (total !== undefined) progress.total = total;
  if (typeof message === 'string') progress.message = message.slice(0, MAX_PROGRESS_MESSAGE_CHARS);
  return progress;
}

/** `ctx` for one call. A class, so its lazy getters live on the prototype (object literals with accessors are slow to create). */
export class CallContext implements ToolContext {
  readonly options: Record<string, unknown>;
  readonly callId: string;
  readonly sessionId?: string;
  readonly workspace: string;
  /** Own properties, not methods: a tool may destructure them (`const { progress } = ctx`). */
  readonly progress: (done: number, total?: number, message?: string) => void;
  readonly authorize: (input: unknown) => Promise<Authorization>;
  readonly elicit: (request: ElicitRequest) => Promise<ElicitResult>;
  readonly sample: (request: SampleRequest) => Promise<SampleResult>;
  private readonly port: CallPort;
  private callLog?: PluginLogger;

  constructor(port: CallPort, options: unknown, workspace: string) {
    this.port = port;
    this.options = options as Record<string, unknown>;
    this.callId = port.callId;
    if (port.sessionId) this.sessionId = port.sessionId;
    this.workspace = workspace;
    this.progress = (done, total, message) => port.progress(progressOf(done, total, message));
    this.authorize = (input) => port.authorize(input);
    this.elicit = (request) => port.elicit(request);
    this.sample = (request) => port.sample(request);
  }

  get signal(): AbortSignal {
    return this.port.signal;
  }

  get log(): PluginLogger {
    this.callLog ??= portLogger(this.port);
    return this.callLog;
  }
}

/** A `PluginLogger` whose lines go to `port.log`; `String(message)`, as a plugin may pass anything. */
export function portLogger(port: Pick<CallPort, 'log'>): PluginLogger {
  const at = (level: LogLevel) => (message: string, data?: Record<string, unknown>) =>
    port.log(level, String(message), data);
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}

/**
 * Hands one log entry of a call to the caller's `onLog`. The caller's code runs inside the tool's
 * `ctx.log` (inline) or the host's message handler (isolated): a throw there loses the entry only.
 */
export function emitLog(
  onLog: ((entry: LogEntry) => void) | undefined,
  level: LogLevel,
  message: string,
  data: unknown,
): void {
  if (!onLog) return;
  const entry: LogEntry = { level, message };
  if (data !== null && typeof data === 'object' && !Array.isArray(data)) entry.data = data as Record<string, unknown>;
  try {
    onLog(entry);
  } catch {
    // the caller's own fault: the tool's call goes on
  }
}
