/**
 * The host's tools over MCP: `start --mcp` (stdio) and `start --mcp-http PORT` (Streamable HTTP).
 *
 * stdio is one long session: tools/list_changed is sent when a plugin is quarantined or comes back,
 * and when a reload (`start --watch`) changed the tools.
 * HTTP is stateless: a fresh server and transport per request, no session, so any number of hosts
 * can sit behind a load balancer; a client that drops the request cancels its call.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transform, type TransformCallback } from 'node:stream';
import ipaddr from 'ipaddr.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { messageOf } from '../errors.ts';
import type { Host } from '../host.ts';
import { createMcpServer, watchPluginStatuses } from './server.ts';
import { guardStdout } from './stdout-guard.ts';

/** The path of the Streamable HTTP endpoint. */
const MCP_HTTP_PATH = '/mcp';

/** The longest message line read on stdio (the SDK's own buffer limit). */
const MCP_STDIO_MAX_LINE_BYTES = 10 * 1024 * 1024;

/** Serves the host on stdin/stdout; resolves when the client disconnects (stdin ends) or `signal` aborts. */
export async function serveMcpStdio(host: Host, opts: { signal?: AbortSignal } = {}): Promise<void> {
  const guard = guardStdout();
  const server = createMcpServer(host, { listChanged: true });
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  const end = () => void server.close();
  const stopWatching = watchPluginStatuses(host, () => {
    host.log.info('tool list changed: a plugin was quarantined or came back');
    void server.sendToolListChanged().catch(() => {});
  });
  const stopReloads = host.onToolsChanged(() => void server.sendToolListChanged().catch(() => {}));
  const lines = new LineLimit(MCP_STDIO_MAX_LINE_BYTES, () => {
    const message = `a message line over the stdio limit of ${MCP_STDIO_MAX_LINE_BYTES} bytes (10 MiB) was dropped`;
    host.log.warn(`MCP stdio: ${message}`);
    // No id: the line was never parsed, so it is unknown (JSON-RPC 2.0 §5).
    guard.channel.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid request: ${message}` } })}\n`,
    );
  });
  process.stdin.once('end', end);
  process.stdin.once('close', end);
  process.stdout.on('error', end); // EPIPE: the client is gone
  opts.signal?.addEventListener('abort', end, { once: true });
  try {
    if (opts.signal?.aborted) return;
    process.stdin.pipe(lines);
    await server.connect(
      new StdioServerTransport(lines, guard.channel, { maxBufferSize: MCP_STDIO_MAX_LINE_BYTES + 1 }),
    );
    host.log.debug(`serving ${host.tools().length} tools over MCP on stdio`);
    await closed;
  } finally {
    stopWatching();
    stopReloads();
    process.stdin.unpipe(lines);
    process.stdin.pause();
    process.stdin.off('end', end);
    process.stdin.off('close', end);
    process.stdout.off('error', end);
    opts.signal?.removeEventListener('abort', end);
    guard.restore();
  }
}

/**
 * stdin cut into whole lines of at most `max` bytes, each its own chunk. Past its buffer limit the
 * SDK's transport closes without a word, and the server with it; here a longer line is dropped and
 * reported through `onOversize`, and the lines after it are read as usual.
 */
class LineLimit extends Transform {
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** Inside a line already reported: drop bytes until its newline. */
  private skipping = false;
  private readonly max: number;
  private readonly onOversize: () => void;

  constructor(max: number, onOversize: () => void) {
    super();
    this.max = max;
    this.onOversize = onOversize;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    for (let start = 0; start < chunk.length; ) {
      const newline = chunk.indexOf(0x0a, start);
      const complete = newline !== -1;
      const end = complete ? newline + 1 : chunk.length;
      const piece = chunk.subarray(start, end);
      start = end;
      if (this.skipping) {
        this.skipping = !complete;
        continue;
      }
      if (this.heldBytes + piece.length - (complete ? 1 : 0) > this.max) {
        this.held = [];
        this.heldBytes = 0;
        this.skipping = !complete;
        this.onOversize();
      } else if (complete) {
        this.push(this.held.length ? Buffer.concat([...this.held, piece]) : piece);
        this.held = [];
        this.heldBytes = 0;
      } else {
        this.held.push(piece);
        this.heldBytes += piece.length;
      }
    }
    done();
  }
}

/**
 * Serves the host over Streamable HTTP at `http://HOST:PORT/mcp`, on 127.0.0.1 unless told
 * otherwise. Requests from a browser page of another origin are refused (403), and so are
 * loopback servers reached under a foreign Host name (DNS rebinding).
 */
export async function serveMcpHttp(
  host: Host,
  opts: { port: number; hostname?: string; signal?: AbortSignal },
): Promise<{ url: string; close(): Promise<void> }> {
  const hostname = opts.hostname ?? '127.0.0.1';
  const loopbackOnly = isLoopbackName(hostname);

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      host.log.warn(`MCP HTTP request failed: ${messageOf(error)}`);
      if (!res.headersSent) reply(res, 500, 'Internal error');
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = req.headers.origin;
    if (origin !== undefined && !isLoopbackOrigin(origin))
      return reply(res, 403, `Origin ${origin} is not allowed: only loopback origins may call this server`);
    if (loopbackOnly && !isLoopbackHost(req.headers.host))
      return reply(
        res,
        403,
        `Host ${req.headers.host ?? '(none)'} is not allowed: this server answers loopback names only`,
      );
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== MCP_HTTP_PATH)
      return reply(res, 404, `Not found: the MCP endpoint is ${MCP_HTTP_PATH}`);
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return reply(res, 405, 'Method not allowed: this server is stateless, send every message as a POST');
    }
    const server = createMcpServer(host, { listChanged: false });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    // A client that goes away mid-call cancels it: closing the server aborts its handlers' signals.
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port, hostname, () => {
      http.off('error', reject);
      // Once listening, a server error (EMFILE, a socket fault) is logged; it must not end the host.
      http.on('error', (error) => host.log.error(`MCP HTTP server error: ${messageOf(error)}`));
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  const url = `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}${MCP_HTTP_PATH}`;
  host.log.debug(`serving ${host.tools().length} tools over MCP at ${url}`);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      opts.signal?.removeEventListener('abort', onAbort);
      http.close(() => resolve());
      http.closeAllConnections();
    }));
  const onAbort = () => void close();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) await close();
  return { url, close };
}

/** A JSON-RPC error body, as the SDK's transport answers: clients parse it either way. */
function reply(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

function isLoopbackName(name: string): boolean {
  const bare = name.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  return ipaddr.isValid(bare) && ipaddr.process(bare).range() === 'loopback';
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackName(url.hostname);
  } catch {
    return false; // `null` (sandboxed frames, file://) and garbage
  }
}

function isLoopbackHost(hostHeader: string | undefined): boolean {
  if (!hostHeader) return false;
  try {
    return isLoopbackName(new URL(`http://${hostHeader}`).hostname);
  } catch {
    return false;
  }
}
