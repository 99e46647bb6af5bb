/**
 * An MCP server as a plugin: a `PluginRunner` (runners/runner.ts) whose tools live in another
 * process (stdio) or behind a URL (Streamable HTTP).
 *
 * The server's tools are renamed `<plugin>_<tool>` (provider-safe, collisions resolved and
 * reported) and checked with the lenient rules (a public server with an undescribed property still
 * loads). Calls run through the host's pipeline like any other; the dispatcher's timeout aborts the
 * request's signal, which the SDK turns into `notifications/cancelled`. A server that exits is
 * restarted with exponential backoff; one that keeps crashing is quarantined for a cooldown, then
 * started again (the crash budget worker plugins use, `isolation.quarantine`). A server behind a URL
 * whose requests start failing (refused, or its session gone after a restart) is connected again the
 * same way. `close()` ends the process (stdin closed, then SIGTERM, then SIGKILL: the SDK's
 * escalation), so no server outlives the host.
 */
import type { PassThrough } from 'node:stream';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { ContentBlock, ToolOutput } from '../contract.ts';
import type { PluginReport, ToolReport } from '../plugin-report.ts';
import { hostError, messageOf } from '../errors.ts';
import { NO_AUDIT, type AuditSink } from '../audit.ts';
import type { Logger } from '../log.ts';
import { CrashBudget, reportFailure } from './crash-budget.ts';
import { schemaTooBig } from '../schema-check.ts';
import { CheckTooCostly } from '../check-budget.ts';
import { MAX_JSON_TEXT_CHARS } from '../json-text.ts';
import { type CheckedValidator, tooCostlyToCheck, validatorFor } from '../shared-validators.ts';
import type {
  LoadedPlugin,
  McpServerSpec,
  PluginHealth,
  PluginRunner,
  PluginSpec,
  RunOutcome,
  RunRequest,
} from './runner.ts';
import type { Violation } from '../types.ts';
import { HOST_INFO } from '../identity.ts';
import { fromMcpAnnotations, mapToolNames } from './mcp-mapping.ts';
import { LineBuffer, type ReadBufferLike } from './line-buffer.ts';
import { progressOf } from './tool-context.ts';
import { thousands } from '../thousands.ts';

/** The SDK's own request timeout must never fire first: the dispatcher owns the call's timeout. */
const NO_SDK_TIMEOUT = 2_147_483_647;
const STDERR_TAIL_LINES = 10;
/**
 * The most of one stderr line kept. readline held a line whole however long it grew, and a failure
 * quoted the last ten in full: a server that wrote 5 MB without a newline put 5 MB in the error.
 */
const STDERR_LINE_CHARS = 2_000;

/** Calls `onLine` with each line of `stream`, cut to STDERR_LINE_CHARS and saying how much was left out. */
function eachLineCut(stream: PassThrough, onLine: (line: string) => void): void {
  stream.setEncoding('utf8');
  let line = '';
  let left = 0;
  const take = (text: string) => {
    const room = STDERR_LINE_CHARS - line.length;
    line += text.slice(0, room);
    left += Math.max(0, text.length - room);
  };
  const end = () => {
    onLine(left > 0 ? `${line}… [${thousands(left)} more characters]` : line.replace(/\r$/, ''));
    line = '';
    left = 0;
  };
  stream.on('data', (chunk: string) => {
    const parts = chunk.split('\n');
    for (let i = 0; i < parts.length - 1; i++) {
      take(parts[i]!);
      end();
    }
    take(parts.at(-1)!);
  });
  stream.on('end', () => {
    if (line !== '' || left > 0) end();
  });
}
const SEMVER = /^\d+\.\d+\.\d+/;
/**
 * The most tools, and characters of their definitions as JSON, the host takes from one server. A
 * list is paged, each page bounded as a message is, but a server decides when it ends: pages added
 * as they came filled the host's memory within a load timeout (pages of 200 small tools from a
 * server on the same machine: the host's RSS at 720 MiB after 20 s). Public servers list tens of tools, a few hundred at most.
 */
const MAX_MCP_TOOLS = 1_000;
const MAX_MCP_TOOL_LIST_CHARS = 16 * 1024 * 1024;
/** JSON-RPC error code of the SDK's "Connection closed" (`ErrorCode.ConnectionClosed`). */
const CONNECTION_CLOSED = -32000;
/** The HTTP status a Streamable HTTP server answers for a session it does not know (after a restart). */
const SESSION_NOT_FOUND = 404;

/** The SDK's client side, imported on first use: a host without MCP plugins never loads it. */
let sdk:
  | Promise<
      typeof import('@modelcontextprotocol/sdk/client/index.js') &
        typeof import('@modelcontextprotocol/sdk/client/stdio.js') &
        typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js')
    >
  | undefined;
function loadSdk() {
  sdk ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]).then(([client, stdio, http]) => ({ ...client, ...stdio, ...http }));
  return sdk;
}

/**
 * The SDK checks a tool's structured output against the server's `outputSchema`; its default (ajv)
 * compiles the server's patterns with the `u` flag and would run them backtracking on the host
 * thread. This one compiles them as tool input schemas are (core/schema-patterns.ts): a pattern
 * that cannot run linear fails the listing, so the server fails to load, naming it.
 */
const LINEAR_VALIDATOR: jsonSchemaValidator = {
  getValidator<T>(schema: unknown) {
    // The SDK asks for every tool's validator as it lists them, before the host's load check: the
    // same bound on size comes first here, or a huge outputSchema would stall the host compiling it.
    const tooBig = schemaTooBig(schema);
    if (tooBig) throw new Error(`a tool's outputSchema: ${tooBig}`);
    let validator: CheckedValidator;
    try {
      validator = validatorFor(schema);
    } catch (error) {
      throw new Error(`a tool's outputSchema at ${messageOf(error)}`);
    }
    // The SDK checks before output.ts does: the same bounds on the check's cost come first here.
    return (input: unknown) => {
      let tooBig = tooCostlyToCheck(validator, input);
      try {
        if (!tooBig && validator.Check(input))
          return { valid: true as const, data: input as T, errorMessage: undefined };
      } catch (error) {
        if (!(error instanceof CheckTooCostly)) throw error;
        tooBig = error.message;
      }
      const problems = tooBig
        ? `too large to check: ${tooBig}`
        : validator
            .problems(input)
            .map((p) => `${p.pointer || '/'}: ${p.message}`)
            .join('; ');
      return { valid: false as const, data: undefined, errorMessage: problems };
    };
  },
};

/**
 * fetch for an MCP server over HTTP, whose answers the SDK parses whole (a JSON body) or event by
 * event (SSE): each is cut off past the bound on JSON text (json-text.ts), the stream failing
 * with an error that names it, before the SDK has buffered more. Over stdio the SDK's own buffer
 * holds the same 10 MiB.
 */
const boundedFetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
  const response = await fetch(url, init);
  if (!response.body) return response;
  const events = response.headers.get('content-type')?.includes('text/event-stream') ?? false;
  let since = 0;
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        // An SSE event ends at a blank line; bytes since the last one are the event being read.
        const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
        const end = events ? Math.max(text.lastIndexOf('\n\n'), text.lastIndexOf('\n\r\n')) : -1;
        since = end === -1 ? since + chunk.byteLength : chunk.byteLength - end;
        if (since > MAX_JSON_TEXT_CHARS)
          controller.error(
            new Error(
              `an answer (or one event) of the MCP server passed ${thousands(MAX_JSON_TEXT_CHARS)} bytes, the host's limit on JSON text parsed at once`,
            ),
          );
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
};

interface Connection {
  client: Client;
  /** Set when the transport closed without us asking: the server exited or crashed. */
  lost: boolean;
}

export function createMcpRunner(
  spec: PluginSpec & { mcp: McpServerSpec },
  log: Logger,
  audit: AuditSink = NO_AUDIT,
): PluginRunner {
  const server = spec.mcp;
  /** Our name → the server's name. */
  const originals = new Map<string, string>();
  const live = new Set<Connection>();
  const stderrTail: string[] = [];
  let connection: Promise<Connection> | undefined;
  const budget = new CrashBudget(spec.quarantine);
  let restartTimer: NodeJS.Timeout | undefined;
  let closed = false;

  const tail = () => (stderrTail.length ? `; its last stderr lines:\n  ${stderrTail.join('\n  ')}` : '');

  async function connect(): Promise<Connection> {
    const { Client } = await loadSdk();
    const client = new Client(HOST_INFO, { capabilities: {}, jsonSchemaValidator: LINEAR_VALIDATOR });
    const conn: Connection = { client, lost: false };
    let ready = false;
    live.add(conn);
    client.onclose = () => {
      live.delete(conn);
      if (closed || conn.lost || !ready) return; // a failed start is reported by connect() itself
      conn.lost = true;
      onCrash('exited');
    };
    try {
      await client.connect(await transportFor(server), { timeout: spec.loadTimeoutMs });
      ready = true;
    } catch (error) {
      conn.lost = true;
      live.delete(conn);
      await client.close().catch(() => {});
      throw hostError('RH_ERR_MCP_CONNECT', [server.name, `${messageOf(error)}${tail()}`], error);
    }
    return conn;
  }

  async function transportFor(s: McpServerSpec) {
    const { StdioClientTransport, StreamableHTTPClientTransport } = await loadSdk();
    if (s.url) return new StreamableHTTPClientTransport(new URL(s.url), { fetch: boundedFetch });
    const transport = new StdioClientTransport({
      command: s.command!,
      ...(s.args ? { args: s.args } : {}),
      ...(s.env ? { env: s.env } : {}),
      ...(s.cwd ? { cwd: s.cwd } : {}),
      stderr: 'pipe', // the server's logs become ours (debug), and the last lines explain a crash
    });
    // The SDK's own buffer stays, given whole lines (LineBuffer); its field is internal, so a
    // version without it keeps reading through its own.
    const reading = transport as unknown as { _readBuffer?: ReadBufferLike };
    if (reading._readBuffer) reading._readBuffer = new LineBuffer(reading._readBuffer, MAX_JSON_TEXT_CHARS);
    eachLineCut(transport.stderr as PassThrough /* stderr: 'pipe' */, (line) => {
      stderrTail.push(line);
      if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
      log.debug(line);
    });
    return transport;
  }

  /** A connection found broken by a failed request: dropped, and a new one started like a crashed server's. */
  function lose(conn: Connection, reason: string): void {
    if (conn.lost || closed) return;
    conn.lost = true;
    live.delete(conn);
    void conn.client.close().catch(() => {});
    // Not restarted on a timer as a process is: a server that is down would burn the crash budget
    // in a second. The next call connects again, and each failure counts once.
    connection = undefined;
    recordFailure(reason);
  }

  /** Counts a crash against the budget and reports it; returns the quarantine it started, if it did. */
  function recordFailure(reason: string): Required<PluginHealth> | undefined {
    return reportFailure(
      budget,
      { log, audit },
      {
        kind: 'crashed',
        plugin: server.name,
        subject: `MCP server "${server.name}"`,
        reason,
        next: server.url ? 'connecting again on the next call' : 'it restarts after a backoff',
        detail: tail(),
      },
    );
  }

  /** The server exited: restart it after a backoff, or after a quarantine when it keeps doing so. */
  function onCrash(reason: string): void {
    const quarantine = recordFailure(reason);
    if (quarantine) {
      scheduleStart(quarantine.until - Date.now());
      return;
    }
    const delay = budget.restartDelay();
    log.debug(`MCP server "${server.name}": restarting in ${delay} ms`);
    scheduleStart(delay);
  }

  /** Starts the server again after `delay`; calls made meanwhile wait for it. */
  function scheduleStart(delay: number): void {
    clearTimeout(restartTimer);
    const started = new Promise<Connection>((resolve, reject) => {
      restartTimer = setTimeout(() => {
        if (closed) return reject(hostError('RH_ERR_HOST_CLOSED', []));
        connect().then(resolve, (error: unknown) => {
          reject(error);
          if (!closed) onCrash(`failed to restart: ${messageOf(error)}`);
        });
      }, delay);
      restartTimer.unref();
    });
    started.catch(() => {}); // calls waiting on it see the error; nobody else needs to
    connection = started;
  }

  return {
    isolation: 'process',

    async load(): Promise<LoadedPlugin> {
      connection = connect();
      const { client } = await connection;
      const tools: McpTool[] = [];
      // Each page is bounded as a message; the list is the server's to end. An empty page counts
      // as one tool, so a server that only ever sends cursors ends at the same bound.
      let counted = 0;
      let chars = 0;
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout: spec.loadTimeoutMs });
        counted += Math.max(1, page.tools.length);
        chars += JSON.stringify(page.tools).length;
        if (counted > MAX_MCP_TOOLS || chars > MAX_MCP_TOOL_LIST_CHARS)
          throw hostError('RH_ERR_MCP_CONNECT', [
            server.name,
            chars > MAX_MCP_TOOL_LIST_CHARS
              ? `its tool list passed ${thousands(MAX_MCP_TOOL_LIST_CHARS)} characters of JSON (${thousands(tools.length + page.tools.length)} tools so far), the most the host takes from one server`
              : `its tool list holds more than ${thousands(MAX_MCP_TOOLS)} tools, the most the host takes from one server`,
          ]);
        // Pushed once bounded: spread as arguments, a page of 150,000 small tools (7 MiB, under
        // a message's 10 MiB) overflows the stack before any bound is checked.
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);

      const { names, collisions } = mapToolNames(
        server.name,
        tools.map((t) => t.name),
      );
      for (const [i, name] of names.entries()) originals.set(name, tools[i]!.name);
      const info = client.getServerVersion();
      const version = info?.version;
      const plugin: PluginReport = {
        exportType: 'object',
        name: server.name,
        // MCP servers are free to version as they like; the check wants semver, so only that is passed on.
        version: typeof version === 'string' && SEMVER.test(version) ? version : '0.0.0',
        description: `MCP server ${info?.name ?? server.name}${version ? ` ${version}` : ''}`,
        toolsType: 'array',
        setupType: 'undefined',
        disposeType: 'undefined',
        unknownKeys: [],
      };
      const reports: ToolReport[] = tools.map((t, i) => {
        const annotations = fromMcpAnnotations(t.annotations, t.title);
        return {
          valueType: 'object',
          name: names[i],
          description: t.description,
          inputSchema: t.inputSchema,
          ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
          ...(annotations ? { annotations } : {}),
          executeType: 'function',
          unknownKeys: [],
        };
      });
      const warnings: Violation[] = collisions.map((c) => ({
        file: spec.source,
        tool: c.name,
        pointer: `/tools/${names.indexOf(c.name)}/name`,
        message: `MCP tool "${c.original}" maps to the same provider-safe name as "${c.with}"; it is exposed as "${c.name}"`,
        severity: 'warning',
      }));
      return { plugin, tools: reports, ...(warnings.length ? { warnings } : {}) };
    },

    async run(request: RunRequest): Promise<RunOutcome> {
      const health = budget.health();
      if (health.quarantined)
        return {
          ok: false,
          code: 'quarantined',
          message: `MCP server "${server.name}" is quarantined: ${health.reason}`,
        };
      const name = originals.get(request.tool);
      if (name === undefined)
        return {
          ok: false,
          code: 'tool_error',
          message: `tool "${request.tool}" is not served by MCP server "${server.name}"`,
        };
      // A second attempt only for a session a restarted server no longer knows: that request reached no tool.
      for (let attempt = 1; ; attempt++) {
        let conn: Connection;
        try {
          connection ??= connect();
          conn = await connection;
        } catch (error) {
          if (server.url && !closed) {
            connection = undefined; // still unreachable: the next call tries again
            recordFailure(`could not be reached: ${messageOf(error)}`);
          }
          return {
            ok: false,
            code: 'crashed',
            message: `MCP server "${server.name}" is not running: ${messageOf(error)}`,
          };
        }
        try {
          const result = await conn.client.callTool(
            { name, arguments: request.input as Record<string, unknown> },
            undefined,
            {
              signal: request.signal,
              timeout: NO_SDK_TIMEOUT,
              ...(request.onProgress
                ? { onprogress: (p) => request.onProgress!(progressOf(p.progress, p.total, p.message)) }
                : {}),
            },
          );
          budget.succeeded();
          return { ok: true, output: toOutput(result) };
        } catch (error) {
          if (conn.lost || (error as { code?: unknown }).code === CONNECTION_CLOSED) {
            return {
              ok: false,
              code: 'crashed',
              message: `MCP server "${server.name}" exited during the call${tail()}`,
            };
          }
          if (server.url && !request.stopped && (error as { name?: unknown }).name !== 'McpError') {
            // Over HTTP nothing says the server went away until a request fails: refused, or a 404 for
            // a session a restarted server no longer knows. A JSON-RPC error (McpError) is the server answering.
            const reason = `could not be reached: ${messageOf(error)}`;
            lose(conn, reason);
            if ((error as { code?: unknown }).code === SESSION_NOT_FOUND && attempt === 1) continue;
            return {
              ok: false,
              code: 'crashed',
              message: `MCP server "${server.name}" ${reason}; it is connected again for the next call`,
            };
          }
          return { ok: false, code: 'tool_error', message: messageOf(error) };
        }
      }
    },

    health(): PluginHealth {
      return budget.health();
    },

    async close(): Promise<void> {
      closed = true;
      clearTimeout(restartTimer);
      await Promise.all([...live].map((c) => c.client.close().catch(() => {})));
    },
  };
}

/**
 * An MCP result as a tool output: text alone as a string; with images, audio or resources, the
 * blocks as they came (the output stage checks and caps them); `structuredContent` as data, and as
 * the text when there is no other.
 */
function toOutput(result: Record<string, unknown>): ToolOutput {
  const blocks = Array.isArray(result.content) ? (result.content as Record<string, unknown>[]) : [];
  const data = result.structuredContent ?? ('toolResult' in result ? result.toolResult : undefined);
  const isError = result.isError === true;
  const extra = data === undefined ? {} : { data };
  if (blocks.some((b) => b?.type !== 'text')) return { content: blocks as ContentBlock[], isError, ...extra };
  const text = blocks.map((b) => String(b.text ?? '')).join('\n');
  return { content: text || (data === undefined ? '' : JSON.stringify(data)), isError, ...extra };
}
