/**
 * The host's tools over Streamable HTTP (`start --mcp-http PORT`, `serve`); stdio.ts is the stdio
 * front end. Sessions (`Mcp-Session-Id`): a server per session, so a client can cancel a call, set
 * its log level, hear tools/list_changed and resume a broken SSE stream; sessions end when idle
 * and are bounded in number (http-sessions.ts). Stateless HTTP (a fresh server per request, no session) is there for
 * hosts behind a load balancer; there a client that drops the request cancels its call.
 * docs/mcp.md says what each gives a client; docs/serve.md how a team server authenticates its
 * callers (auth.ts), limits them (caller-limits.ts), is probed (probes.ts) and shuts down. Every
 * request first passes the DNS-rebinding guard (rebinding.ts).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  requestBodyTooLargeMessage,
} from '@modelcontextprotocol/sdk/server/requestBody.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { CallerLimitsConfig, MetricsGrant } from '../config-schema.ts';
import { hostError, messageOf } from '../errors.ts';
import type { Host } from '../host.ts';
import type { Caller } from '../types.ts';
import {
  type Authenticate,
  type AuthRefusal,
  challenge,
  isAuthRefusal,
  type ProtectedResource,
  protectedResourceMetadata,
} from './auth.ts';
import { ANONYMOUS_CALLER, CallerLimits } from './caller-limits.ts';
import { BoundedEventStore, EventBudget } from './event-store.ts';
import { HttpSessions, type Session } from './http-sessions.ts';
import { createProbes, METRICS_PATH } from './probes.ts';
import { isLoopbackName, rebindingRefusal } from './rebinding.ts';
import { authInfoOf, withPlaces } from './request-identity.ts';
import { createMcpServer, watchToolChanges } from './server.ts';

/** The path of the Streamable HTTP endpoint. */
const MCP_HTTP_PATH = '/mcp';

/** Where OAuth clients read what this server is (RFC 9728), also with the endpoint's path after it. */
const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

export interface McpHttpOptions {
  port: number;
  /** Put the policy's `ask` to clients that can elicit (default true; false with `--yes`). */
  askClient?: boolean;
  /** Default `127.0.0.1`. */
  hostname?: string;
  signal?: AbortSignal;
  /** No sessions: a fresh server per request, for hosts behind a load balancer. Default false. */
  stateless?: boolean;
  /** A session with no request open for this long is closed. Default 30 minutes. */
  sessionIdleMs?: number;
  /** The most sessions kept; a new one closes the one idle longest. Default 100. */
  maxSessions?: number;
  /**
   * With `authenticate`, the most sessions one caller keeps; their new one closes their own idle
   * longest. Default a quarter of `maxSessions`: no one caller can hold every place.
   */
  maxSessionsPerCaller?: number;
  /**
   * Who is calling (auth.ts): every request to the endpoint must prove a caller, who then owns the
   * sessions it opens. Required to listen on anything but loopback.
   */
  authenticate?: Authenticate;
  /** Tool calls per caller (docs/serve.md, "Per-caller policy and limits"). Default: the config's `serve.limits`. */
  limits?: CallerLimitsConfig;
  /**
   * With `authenticate`, the callers that may read `/metrics` (docs/serve.md, "Metrics and
   * tracing"); no other caller may. Default: the config's `serve.metrics`.
   */
  metrics?: MetricsGrant;
  /** With an OAuth issuer: the server serves its RFC 9728 metadata, and 401 answers point at it. */
  protectedResource?: ProtectedResource;
  /** The URL clients reach the endpoint at, when a proxy stands in front. Default: built from the request. */
  publicUrl?: string;
}

export interface McpHttpServer {
  url: string;
  /** Sessions open. */
  sessions(): number;
  /**
   * Stops the server: no new connection, 503 to a new request on an open one. Calls in flight get
   * `graceMs` to finish (default 0); then those still running are cancelled and every session ends.
   */
  close(graceMs?: number): Promise<void>;
}

/** A request as the SDK's transport reads it: `auth` becomes each handler's `extra.authInfo`. */
type McpRequest = IncomingMessage & { auth?: AuthInfo };

/** Events kept per session for clients that reconnect with `Last-Event-ID`. */
const MCP_HTTP_EVENTS_PER_SESSION = 1000;

/** And the characters of JSON those events may hold: 1,000 capped tool results would be 64 MiB a session. */
const MCP_HTTP_EVENT_CHARS_PER_SESSION = 4 * 1024 * 1024;

/**
 * And the characters every session's events may hold together: 100 sessions (the default, a
 * quarter of them one caller's) of 4 Mi each would be 400 Mi characters, up to 800 MiB of strings,
 * that callers fill by calling tools with large results.
 */
const MCP_HTTP_EVENT_CHARS = 64 * 1024 * 1024;

/** The `retry` an SSE stream suggests: how soon a client whose stream broke reconnects. */
const MCP_HTTP_RETRY_MS = 1000;

/**
 * Serves the host over Streamable HTTP at `http://HOST:PORT/mcp`, on 127.0.0.1 unless told
 * otherwise. Requests from a browser page of another origin are refused (403), and so are
 * loopback servers reached under a foreign Host name (DNS rebinding). Any other address needs
 * `authenticate` (RH_ERR_SERVE_NO_AUTH).
 */
export async function serveMcpHttp(host: Host, opts: McpHttpOptions): Promise<McpHttpServer> {
  const hostname = opts.hostname ?? '127.0.0.1';
  const loopbackOnly = isLoopbackName(hostname);
  if (!loopbackOnly && !opts.authenticate) throw hostError('RH_ERR_SERVE_NO_AUTH', [hostname]);
  // A proxy on the same machine passes on the name clients reached it at: the public URL's, which
  // is the operator's own and so no rebinding.
  const publicName = opts.publicUrl === undefined ? undefined : new URL(opts.publicUrl).hostname;
  const maxSessions = opts.maxSessions ?? 100;
  const sessions = new HttpSessions(host.log, {
    idleMs: opts.sessionIdleMs ?? 30 * 60_000,
    max: maxSessions,
    maxPerCaller: opts.maxSessionsPerCaller ?? Math.max(1, Math.floor(maxSessions / 4)),
  });
  const events = new EventBudget(MCP_HTTP_EVENT_CHARS);
  const limitsConfig = opts.limits ?? host.config.serve?.limits;
  const limits = limitsConfig ? new CallerLimits(limitsConfig) : undefined;
  const metricsGrant = opts.metrics ?? host.config.serve?.metrics;
  let closing: Promise<void> | undefined;
  // /healthz, /readyz, /metrics (docs/serve.md, "Metrics and tracing").
  const probes = createProbes(host, {
    ...(opts.stateless ? {} : { sessions: () => sessions.size }),
    closing: () => closing !== undefined,
    ...(opts.authenticate ? { authorizeMetrics: (req, res) => authorized(req, res) } : {}),
  });
  /** POSTs to the endpoint not yet answered: the calls (and other requests) a shutdown waits for. */
  let posts = 0;
  let onAnswered: (() => void) | undefined;
  let draining = false;

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      host.log.warn(`MCP HTTP request failed: ${messageOf(error)}`);
      if (!res.headersSent) reply(res, 500, 'Internal error');
      else res.end();
    });
  });

  /**
   * One request, in order: refused while the server shuts down; the origin and Host checks; the
   * probes and the OAuth metadata, which need no caller; then, at the endpoint, the caller proved,
   * the request counted for a graceful shutdown, its tool calls admitted under the caller's limits,
   * and the rest left to its session (or to a server of its own, stateless).
   */
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (draining) return refuseDraining(res);
    const rebound = rebindingRefusal(req.headers, loopbackOnly, publicName);
    if (rebound) return reply(res, 403, rebound);
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    if (await probes.answer(req, res, pathname)) return;
    if (
      opts.protectedResource &&
      (pathname === PROTECTED_RESOURCE_PATH || pathname.startsWith(`${PROTECTED_RESOURCE_PATH}/`))
    )
      return replyJson(res, 200, protectedResourceMetadata(resourceUrl(req), opts.protectedResource));
    if (pathname !== MCP_HTTP_PATH) return reply(res, 404, `Not found: the MCP endpoint is ${MCP_HTTP_PATH}`);
    const caller = opts.authenticate ? await authenticated(req, res) : undefined;
    if (opts.authenticate && !caller) return; // refused: answered
    // The server may have begun to close while the request was authenticated (a key set fetch).
    if (draining) return refuseDraining(res);
    if (req.method === 'POST') {
      posts++;
      res.on('close', () => {
        if (--posts === 0) onAnswered?.();
      });
    }
    let body: unknown;
    if (limits && req.method === 'POST' && isJsonContentType(req.headers['content-type'])) {
      const admitted = await admitCalls(limits, caller, req, res);
      if (!admitted) return;
      body = admitted.body;
      // Or while its body was read: past this point it would open a session nothing closes.
      if (draining) return refuseDraining(res);
    }
    return opts.stateless ? handleStateless(req, res, body) : handleSession(req, res, body, caller);
  }

  /**
   * The request's caller, put where the SDK hands it to each request's handlers (`req.auth`), so
   * the calls carry it to the policy and the audit; or undefined, the refusal answered.
   */
  async function authenticated(req: IncomingMessage, res: ServerResponse): Promise<Caller | undefined> {
    const outcome = (await opts.authenticate!(req)) ?? { status: 401 };
    if (isAuthRefusal(outcome)) {
      refuse(req, res, outcome);
      return undefined;
    }
    (req as McpRequest).auth = authInfoOf(outcome);
    return outcome;
  }

  /**
   * `/metrics` asks for the same credentials as the endpoint, and a grant: the numbers name every
   * tool and caller, those the policy hides from the reader included.
   */
  async function authorized(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const caller = await authenticated(req, res);
    if (!caller) return false;
    if (mayReadMetrics(caller, metricsGrant)) return true;
    const scopes = metricsGrant?.scopes ?? [];
    refuse(req, res, {
      status: 403,
      error: 'insufficient_scope',
      description: `caller "${caller.name}" may not read ${METRICS_PATH}: only the callers and scopes serve.metrics names may (docs/serve.md)`,
      ...(scopes.length ? { scope: scopes.join(' ') } : {}),
    });
    return false;
  }

  /** The endpoint's URL as the client reached it: what OAuth metadata names as the resource. */
  function resourceUrl(req: IncomingMessage): string {
    return opts.publicUrl ?? `http://${req.headers.host ?? hostname}${MCP_HTTP_PATH}`;
  }

  function refuse(req: IncomingMessage, res: ServerResponse, refusal: AuthRefusal): void {
    let metadata: string | undefined;
    if (opts.protectedResource) {
      const resource = new URL(resourceUrl(req));
      metadata = `${resource.origin}${PROTECTED_RESOURCE_PATH}${resource.pathname.replace(/\/$/, '')}`;
    }
    res.setHeader('www-authenticate', challenge(refusal, metadata));
    const what = refusal.status === 403 ? 'Forbidden' : 'Unauthorized';
    reply(
      res,
      refusal.status,
      refusal.description ? `${what}: ${refusal.description}` : `${what}: send Authorization: Bearer TOKEN`,
    );
  }

  async function handleStateless(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return reply(res, 405, 'Method not allowed: this server is stateless, send every message as a POST');
    }
    const server = createMcpServer(host, { listChanged: false, stateless: true, askClient: opts.askClient ?? true });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    // A client that goes away mid-call cancels it: closing the server aborts its handlers' signals.
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function handleSession(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    caller: Caller | undefined,
  ): Promise<void> {
    const owner = caller && ownerOf(caller);
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const session = sessions.find(id, owner);
      // The spec's answer to an unknown session: 404, and the client starts a new one.
      if (!session)
        return reply(
          res,
          404,
          `Session not found: ${id} expired (idle ${sessions.idleMs} ms) or never existed; initialize a new session`,
          -32001,
        );
      sessions.serving(session, res);
      return session.transport.handleRequest(req, res, body);
    }
    // No session yet: this must be an initialize, which the new transport checks (400 otherwise).
    const place = sessions.reserve(owner);
    if (!place.ok) return reply(res, 503, place.refusal);
    const releasePlace = place.release;
    const server = createMcpServer(host, {
      listChanged: true,
      askClient: opts.askClient ?? true,
      ...(caller ? { caller } : {}),
    });
    const eventStore = new BoundedEventStore(MCP_HTTP_EVENTS_PER_SESSION, MCP_HTTP_EVENT_CHARS_PER_SESSION, events);
    const session: Session = {
      owner,
      server,
      events: eventStore,
      transport: new StreamableHTTPServerTransport({
        // The host id first: a load balancer routes the session's requests back here by it.
        sessionIdGenerator: () => `${host.hostId}.${randomUUID()}`,
        eventStore,
        retryInterval: MCP_HTTP_RETRY_MS,
        onsessioninitialized: (sid) => {
          releasePlace();
          sessions.add(sid, session);
        },
        onsessionclosed: (sid) => void sessions.end(sid, 'the client ended it'),
      }),
      open: 0,
      lastSeen: Date.now(),
    };
    sessions.serving(session, res);
    res.on('close', () => {
      releasePlace();
      // Not initialized: nothing will ever reach this server again.
      if (session.transport.sessionId === undefined) {
        eventStore.end();
        void session.transport.close();
        void server.close();
      }
    });
    await server.connect(session.transport);
    await session.transport.handleRequest(req, res, body);
  }

  // Stateless, there is no session to tell.
  const stopWatching = opts.stateless ? () => {} : watchToolChanges(host);

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port, hostname, () => {
      http.off('error', reject);
      // Once listening, a server error (EMFILE, a socket fault) is logged; it must not end the host.
      http.on('error', (error) => host.log.error(`MCP HTTP server error: ${messageOf(error)}`));
      resolve();
    });
  }).catch((error: unknown) => {
    sessions.stopSweep();
    stopWatching();
    probes.close();
    throw error;
  });
  const { port } = http.address() as AddressInfo;
  const url = `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}${MCP_HTTP_PATH}`;
  host.log.debug(`serving ${host.tools().length} tools over MCP at ${url}`);

  const close = (graceMs = 0) =>
    (closing ??= (async () => {
      draining = true;
      opts.signal?.removeEventListener('abort', onAbort);
      sessions.stopSweep();
      stopWatching();
      probes.close();
      // No new connection from here; those open are ended below, once the calls on them are answered.
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
      if (posts > 0 && graceMs > 0) {
        host.log.info(`MCP HTTP: waiting up to ${graceMs} ms for ${posts} request(s) in flight`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, graceMs);
          onAnswered = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        if (posts > 0)
          host.log.warn(`MCP HTTP: ${posts} request(s) still in flight after ${graceMs} ms: cancelling them`);
      }
      sessions.endAll('the server is closing');
      http.closeAllConnections();
      await stopped;
    })());
  const onAbort = () => void close();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) await close();
  return { url, sessions: () => sessions.size, close };
}

/**
 * Reads a POST's JSON body and takes its `tools/call` requests (each one of a batch) from the
 * caller's limits; the body goes on to the transport, which cannot read the stream again. Over a
 * limit, or on a body the transport would refuse, answers here and returns undefined.
 */
async function admitCalls(
  limits: CallerLimits,
  caller: Caller | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<{ body: unknown } | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > DEFAULT_MAX_REQUEST_BODY_SIZE) {
      reply(res, 413, requestBodyTooLargeMessage(DEFAULT_MAX_REQUEST_BODY_SIZE));
      return undefined;
    }
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    reply(res, 400, 'Parse error: Invalid JSON', -32700);
    return undefined;
  }
  const messages = Array.isArray(body) ? body : [body];
  const calls = messages.filter((m) => (m as { method?: unknown } | null)?.method === 'tools/call');
  if (calls.length === 0) return { body };
  const admission = limits.admit(caller?.name ?? ANONYMOUS_CALLER, calls.length);
  if (admission.ok) {
    // Each call gives its place back when it ends (server.ts); a call that never reached its
    // handler (the transport refused the request) gives it back with the response.
    (req as McpRequest).auth = withPlaces((req as McpRequest).auth, admission.places);
    res.once('close', admission.close);
    return { body };
  }
  const { limit, retryAfterSeconds, message } = admission;
  // One call: its own id, so the error is the answer to that request.
  const id = messages.length === 1 ? ((calls[0] as { id?: unknown }).id ?? null) : null;
  res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(retryAfterSeconds) });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message, data: { limit, retryAfterSeconds } }, id }));
  return undefined;
}

function refuseDraining(res: ServerResponse): void {
  if (res.destroyed) return;
  res.setHeader('connection', 'close');
  reply(res, 503, 'The server is shutting down: send the request again to another host, or later');
}

/** A JSON-RPC error body, as the SDK's transport answers: clients parse it either way. */
function reply(res: ServerResponse, status: number, message: string, code = -32000): void {
  replyJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

function replyJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Whether `serve.metrics` names the caller, or one of its scopes. */
function mayReadMetrics(caller: Caller, grant: MetricsGrant | undefined): boolean {
  if (!grant) return false;
  return (
    (grant.callers?.includes(caller.name) ?? false) || (grant.scopes?.some((s) => caller.scopes.includes(s)) ?? false)
  );
}

/** Who owns a session: a token and a JWT subject of the same name are different callers. */
function ownerOf(caller: Caller): string {
  return `${caller.via}:${caller.name}`;
}
