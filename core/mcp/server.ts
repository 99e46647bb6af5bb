/**
 * The host as an MCP server: the SDK's low-level `Server` with our own `tools/list` and
 * `tools/call`, so clients see exactly the JSON Schema our plugins declare and every call runs
 * through `host.call` (validation, policy, isolation, timeout, cap, audit). Transports are in
 * stdio.ts and serve.ts (HTTP); this file knows nothing about them.
 */
import { createHash } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  LoggingLevelSchema,
  SetLevelRequestSchema,
  type CallToolResult,
  type LoggingLevel,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { Host } from '../host.ts';
import type { Caller, CallOptions, CallResult } from '../types.ts';
import { HOST_INFO } from '../identity.ts';
import { toMcpAnnotations } from '../runners/mcp-mapping.ts';
import { clientHandlers, STATELESS_HANDLERS } from './client-questions.ts';
import { serverCapabilities } from './handshake.ts';
import { callerOf, placesOf, sessionTag } from './request-identity.ts';
import { type CallParams, plainCallParams } from './shapes.ts';

/**
 * Elicitation requests go out through `extra.sendRequest` and their answers are checked by the host
 * (questions.ts), never by the SDK's `elicitInput`: no JSON Schema validator is needed. The SDK's
 * default builds an Ajv instance per `Server`, which a stateless HTTP request would pay for.
 */
const NO_ELICITATION: jsonSchemaValidator = {
  getValidator: () => () => ({
    valid: false,
    data: undefined,
    errorMessage: 'rousseau-host checks elicitation answers itself',
  }),
};

/** What the protocol layer checks of a `tools/call` request: its method; the handler parses the rest. */
const CALL_METHOD = CallToolRequestSchema.pick({ method: true }).loose();

/** How long a result waits after the call's last progress notification (see typescript-sdk#2580). */
const PROGRESS_SETTLE_MS = 10;

/** MCP's levels, least severe first (`debug` … `emergency`). */
const SEVERITY = new Map(LoggingLevelSchema.options.map((level, index) => [level, index]));

/** Our log levels as MCP's. */
const MCP_LEVEL: Record<'error' | 'warn' | 'info' | 'debug', LoggingLevel> = {
  error: 'error',
  warn: 'warning',
  info: 'info',
  debug: 'debug',
};

/** What a session receives until its client sends `logging/setLevel` (docs/mcp.md, "What the client sees"). */
const DEFAULT_MCP_LOG_LEVEL: LoggingLevel = 'info';

export interface McpServerOptions {
  /** Promise `notifications/tools/list_changed`: there is a session to send it on (not stateless HTTP). */
  listChanged: boolean;
  /**
   * Put the policy's `ask` to a client that can elicit (default true). False when the host has its
   * own answer (`--yes`): the operator's choice is not overridden by asking the client.
   */
  askClient?: boolean;
  /** Stateless HTTP: no session, so no client capabilities; `ctx.elicit` and `ctx.sample` say why. */
  stateless?: boolean;
  /**
   * The caller every request of this session proves (an authenticated HTTP session). It hears
   * `list_changed` only when the tools it may see changed: a change to tools the policy hides
   * from it would tell it they exist.
   */
  caller?: Caller;
  /**
   * The transport writes the host's pending audit lines just before it sends anything (stdio.ts,
   * with `host.flushAudit()`): a result need not wait for `host.auditWritten()` first.
   */
  auditedByTransport?: boolean;
}

/** What a session of a caller was last shown: a digest of its tool list. */
interface Seen {
  caller?: Caller;
  tools?: string;
}

/** The servers of each host that promised list_changed and are still connected. */
const sessions = new WeakMap<Host, Map<Server, Seen>>();

const digestOf = (tools: McpTool[]) => createHash('sha256').update(JSON.stringify(tools)).digest('base64');

/**
 * Sends `notifications/tools/list_changed` to every connected session of `host` (the tool set
 * changed: a plugin was quarantined, came back, or was reloaded), or, for a session of a caller,
 * when the list that caller sees is not the one it was last shown. Never throws: a session whose
 * client left just misses it.
 */
export function sendToolListChanged(host: Host): void {
  for (const [server, seen] of sessions.get(host) ?? []) {
    // Nothing goes to a client before its `initialize`: it lists the tools after that anyway.
    if (!server.getClientCapabilities()) continue;
    if (seen.caller) {
      const tools = digestOf(listTools(host, seen.caller));
      if (tools === seen.tools) continue;
      seen.tools = tools;
    }
    void server.sendToolListChanged().catch(() => {});
  }
}

/**
 * A low-level MCP server whose tools are the host's loaded, non-quarantined tools. `host` may still
 * be loading: `initialize` is answered at once, and `tools/list` and `tools/call` wait for it; a
 * host whose plugins load in the background lists them once they are in, or after a bounded wait
 * those registered so far (docs/mcp.md, "Start-up").
 */
export function createMcpServer(
  host: Host | Promise<Host>,
  {
    listChanged,
    askClient = true,
    stateless = false,
    caller: sessionCaller,
    auditedByTransport = false,
  }: McpServerOptions,
): Server {
  const server = new Server(HOST_INFO, {
    capabilities: serverCapabilities(listChanged),
    jsonSchemaValidator: NO_ELICITATION,
  });
  let loaded = host instanceof Promise ? undefined : host;
  const ready = Promise.resolve(host);
  let closed = false;
  const seen: Seen = sessionCaller ? { caller: sessionCaller } : {};
  // Chained, not replaced: a transport's owner (stdio.ts) adds its own `onclose` after this one.
  server.onclose = () => {
    closed = true;
    if (loaded) sessions.get(loaded)?.delete(server);
  };
  // A host that fails to load is its caller's error to report; the requests waiting on it fail with it.
  ready.then(
    (h) => {
      loaded = h;
      if (!listChanged || closed) return;
      if (sessionCaller) seen.tools = digestOf(listTools(h, sessionCaller));
      const map = sessions.get(h) ?? new Map<Server, Seen>();
      sessions.set(h, map.set(server, seen));
    },
    () => {},
  );

  // One level per server, and a server per session (serve.ts): the level a client sets is its own.
  let level = SEVERITY.get(DEFAULT_MCP_LOG_LEVEL)!;
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    level = SEVERITY.get(request.params.level)!;
    return {};
  });

  let tag: string | undefined;
  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    const h = loaded ?? (await ready);
    await loadedOrLater(h, extra.signal);
    const tools = listTools(h, callerOf(extra.authInfo));
    if (seen.caller) seen.tools = digestOf(tools);
    return { tools };
  });

  // Past the SDK `Server`'s own `setRequestHandler`, whose `tools/call` wrapper parses each request
  // a second time and each result once more: the request is read once, here (plain params with a
  // check in plain code, shapes.ts; anything else with the SDK's schema), and the result is
  // built from blocks the host has checked (the two parses and the wrapper's own promise cost about
  // 1 µs of CPU per call). The protocol layer beneath is handed a schema of the method alone: a
  // request it failed to parse would be answered as an internal error, not as invalid params. The
  // wrapper's one other duty, checking a task-augmented call's result, has no use here: the host
  // offers no tasks. An SDK upgrade trips a test (test/mcp/server.test.ts), so the wrapper is read
  // again before it is skipped again.
  Protocol.prototype.setRequestHandler.call(server, CALL_METHOD, async (raw, extra): Promise<CallToolResult> => {
    const { name, arguments: args, _meta } = plainCallParams(raw) ?? parseCallParams(raw);
    const h = loaded ?? (await ready);
    const options: CallOptions = {
      signal: extra.signal,
      onLog: ({ level: ours, message, data }) => {
        const mcpLevel = MCP_LEVEL[ours];
        if (SEVERITY.get(mcpLevel)! < level) return;
        void extra
          .sendNotification({
            method: 'notifications/message',
            params: { level: mcpLevel, logger: name, data: data ? { message, ...data } : message },
          })
          .catch(() => {}); // the client left: the call's signal tells the tool
      },
    };
    if (extra.sessionId) options.sessionId = tag ??= sessionTag(extra.sessionId);
    const caller = callerOf(extra.authInfo);
    if (caller) options.caller = caller;
    const { elicit, sample, approve } = stateless
      ? STATELESS_HANDLERS
      : clientHandlers(server.getClientCapabilities(), extra);
    if (elicit) options.elicit = elicit;
    if (sample) options.sample = sample;
    if (askClient && approve) options.approve = approve;
    const token = _meta?.progressToken;
    let sent: Promise<void> | undefined;
    if (token !== undefined) {
      // MCP requires progress to increase; a tool that reports 3 then 2 is not the client's problem.
      let last = -Infinity;
      options.onProgress = ({ done, total, message }) => {
        if (!(done > last)) return;
        last = done;
        sent = extra
          .sendNotification({
            method: 'notifications/progress',
            params: {
              progressToken: token,
              progress: done,
              ...(total === undefined ? {} : { total }),
              ...(message === undefined ? {} : { message }),
            },
          })
          .catch(() => {}); // the client left: the call's signal tells the tool
      };
    }
    const place = placesOf(extra.authInfo)?.enter();
    if (place) options.onRun = place.onRun;
    let result: CallResult;
    try {
      result = await h.call(name, args ?? {}, options);
    } finally {
      place?.leave(); // whatever happens: a place kept would refuse the caller's calls until restart
    }
    // No answer leaves ahead of its audit line: a host killed once it has answered has audited the call.
    if (!auditedByTransport) await h.auditWritten();
    if (sent) {
      // SDK v1 clients handle notifications a microtask late but responses at once, so progress read
      // in the same chunk as the response is dropped (typescript-sdk#2580): give the client a moment
      // to read the progress first. Only calls that reported progress pay for it.
      await sent;
      await new Promise((resolve) => setTimeout(resolve, PROGRESS_SETTLE_MS));
    }
    return toCallToolResult(result);
  });

  return server;
}

/** A `tools/call` request's params as the SDK's schema reads them; a request it refuses is answered "Invalid params". */
function parseCallParams(raw: unknown): CallParams {
  const parsed = CallToolRequestSchema.safeParse(raw);
  if (!parsed.success)
    throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call request: ${parsed.error.message}`);
  return parsed.data.params;
}

/**
 * How long `tools/list` waits for plugins still loading. A one-shot client (the MCP Inspector's
 * `--cli --method tools/list`) lists once, right after `initialize`, and would see none of them.
 * Short: plugins load in well under a second (a hundred TypeScript plugins in about one and a half),
 * while a client discovering tools may give up after a few seconds; a slower plugin is announced
 * with `list_changed` instead.
 */
const LIST_WAIT_MS = 3_000;

/** Resolves when every plugin of `host` is in, after `LIST_WAIT_MS`, or when the request is cancelled. */
function loadedOrLater(host: Host, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, LIST_WAIT_MS).unref();
    signal.addEventListener('abort', done, { once: true });
    host.ready.then(done, done);
  });
}

/**
 * The host's tools in its order (sorted by name), without those of quarantined plugins, nor those
 * the caller can never call (docs/policy.md, "Callers and scopes"): their calls answer `unknown_tool`.
 */
export function listTools(host: Host, caller?: Caller): McpTool[] {
  // Only a quarantined plugin has tools to hide: a failed one has none, and may share its name
  // with the loaded plugin it collided with.
  const unavailable = new Set(
    host
      .plugins()
      .filter((p) => p.status === 'quarantined')
      .map((p) => p.name),
  );
  const tools: McpTool[] = [];
  for (const t of host.tools()) {
    if (unavailable.has(t.plugin) || !host.policy.canEverCall(t, caller)) continue;
    const annotations = toMcpAnnotations(t.annotations);
    tools.push({
      name: t.name,
      ...(t.annotations?.title ? { title: t.annotations.title } : {}),
      description: t.description,
      inputSchema: t.inputSchema as McpTool['inputSchema'],
      ...(t.outputSchema ? { outputSchema: t.outputSchema as McpTool['outputSchema'] } : {}),
      ...(annotations ? { annotations } : {}),
    });
  }
  return tools;
}

/**
 * Every failure is a result with `isError` (spec 2025-11-25: even unknown tools and invalid input,
 * so the model can react); `_meta` carries our result code for clients that want to tell a timeout
 * from a denial. A tool's blocks (images, audio, resources) are served as they are; its data as
 * `structuredContent`, whose JSON the text already holds when the tool has an `outputSchema`.
 */
function toCallToolResult(r: CallResult): CallToolResult {
  const result: CallToolResult = {
    content: r.blocks ? (r.blocks as CallToolResult['content']) : [{ type: 'text', text: r.content }],
  };
  if (r.isError) result.isError = true;
  if (r.data !== null && typeof r.data === 'object' && !Array.isArray(r.data))
    result.structuredContent = r.data as Record<string, unknown>;
  if (r.code || r.truncated || r.dataTruncated) {
    result._meta = {
      ...(r.code ? { 'rousseau-host/code': r.code } : {}),
      ...(r.truncated ? { 'rousseau-host/truncated': true } : {}),
      ...(r.dataTruncated ? { 'rousseau-host/dataTruncated': true } : {}),
    };
  }
  return result;
}

/**
 * Calls `onChange` when a plugin's status changes (quarantined, back). Quarantine ends on a clock
 * inside the runners, so nothing can push that moment to us: a cheap poll of the statuses it is.
 */
function watchPluginStatuses(host: Host, onChange: () => void, intervalMs = 500): () => void {
  const signature = () =>
    host
      .plugins()
      .map((p) => `${p.name}:${p.status}`)
      .join('\n');
  let last = signature();
  const timer = setInterval(() => {
    const now = signature();
    if (now === last) return;
    last = now;
    onChange();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Tells every session when the tool list changed: a plugin registered while the host loads, a
 * plugin quarantined or back (statuses are polled once every plugin is in), or a reload
 * (`start --watch`) that swapped tools. Returns the unsubscribe.
 */
export function watchToolChanges(host: Host): () => void {
  let stopped = false;
  let stopStatuses = () => {};
  void host.ready.then(
    () => {
      if (stopped) return;
      stopStatuses = watchPluginStatuses(host, () => {
        host.log.info('tool list changed: a plugin was quarantined or came back');
        sendToolListChanged(host);
      });
    },
    () => {},
  );
  const stopChanges = host.onToolsChanged(() => sendToolListChanged(host));
  return () => {
    stopped = true;
    stopStatuses();
    stopChanges();
  };
}
