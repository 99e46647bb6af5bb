/**
 * The host's tools over stdio (`start --mcp`): one long session on stdin/stdout, with stdout kept
 * for MCP messages alone (stdout-guard.ts). serve.ts is the Streamable HTTP front end; docs/mcp.md
 * says what each gives a client.
 */
import type { Readable } from 'node:stream';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Host } from '../host.ts';
import { dropReplayAnswers, STDIO_LIST_CHANGED } from './handshake.ts';
import { createMcpServer, watchToolChanges } from './server.ts';
import { isPlainRequest } from './shapes.ts';
import { guardStdout } from './stdout-guard.ts';
import { MAX_JSON_TEXT_CHARS } from '../json-text.ts';

/** The longest message line read on stdio: the bound on JSON text from outside (the SDK's own buffer limit too). */
const MCP_STDIO_MAX_LINE_BYTES = MAX_JSON_TEXT_CHARS;

/**
 * Serves the host on stdin/stdout; resolves when the client disconnects (stdin ends) or `signal`
 * aborts. `host` may still be loading: `initialize` is answered at once; with its plugins loading
 * in the background, `tools/list` answers with the tools registered so far and each further plugin
 * is announced with `notifications/tools/list_changed`. A host whose config fails to load closes
 * the connection and rejects with its error. `replayed`: the answers to the `initialize` requests
 * stdio-start.ts answered before the SDK loaded and put back on stdin to be read again, by id.
 */
export async function serveMcpStdio(
  host: Host | Promise<Host>,
  opts: { signal?: AbortSignal; askClient?: boolean; replayed?: Map<string, unknown> } = {},
): Promise<void> {
  let loaded: Host | undefined;
  // Every answer leaves in a write to stdout, and the audit lines written so far go to their file
  // just before it, in the same turn: one audit write for the answers of a tick, and no promise per
  // answer to wait for it. A host still loading has answered no call.
  const guard = guardStdout(() => loaded?.flushAudit());
  const ready = Promise.resolve(host);
  const server = createMcpServer(ready, {
    listChanged: STDIO_LIST_CHANGED,
    askClient: opts.askClient ?? true,
    auditedByTransport: true,
  });
  const ownClose = server.onclose;
  const closed = new Promise<void>(
    (resolve) =>
      (server.onclose = () => {
        ownClose?.();
        resolve();
      }),
  );
  const end = () => void server.close();
  let stopWatching = () => {};
  ready.then((h) => {
    loaded = h;
    if (ended) return;
    stopWatching = watchToolChanges(h);
    void h.ready.then(
      () => h.log.debug(`serving ${h.tools().length} tools over MCP on stdio`),
      () => {},
    );
  }, end);
  let ended = false;
  const transport = new StdioTransport({
    input: process.stdin,
    send: guard.send,
    max: MCP_STDIO_MAX_LINE_BYTES,
    onOversize: () => {
      const message = `a message line over the stdio limit of ${MCP_STDIO_MAX_LINE_BYTES} bytes (10 MiB) was dropped`;
      ready.then(
        (h) => h.log.warn(`MCP stdio: ${message}`),
        () => {},
      );
      // No id: the line was never parsed, so it is unknown (JSON-RPC 2.0 §5).
      void guard.send(
        `${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid request: ${message}` } })}\n`,
      );
    },
  });
  if (opts.replayed)
    dropReplayAnswers(transport, opts.replayed, (ours, sdks) =>
      ready.then(
        (h) =>
          h.log.error(
            `MCP stdio: the host answered initialize with ${ours} before the MCP SDK loaded, where the SDK answers ${sdks}; core/mcp/handshake.ts needs reading again against this SDK version (RH_ERR_INTERNAL)`,
          ),
        () => {},
      ),
    );
  process.stdin.once('end', end);
  process.stdin.once('close', end);
  process.stdout.on('error', end); // EPIPE: the client is gone
  opts.signal?.addEventListener('abort', end, { once: true });
  try {
    if (opts.signal?.aborted) return;
    await server.connect(transport);
    // stdio-start.ts paused stdin while the SDK loaded, and a `data` listener does not resume a
    // stream paused by hand.
    process.stdin.resume();
    transport.request = requestPathOf(server);
    await closed;
    await ready; // the host's own error, when it is why the server closed
  } finally {
    ended = true;
    stopWatching();
    process.stdin.pause();
    process.stdin.off('end', end);
    process.stdin.off('close', end);
    process.stdout.off('error', end);
    opts.signal?.removeEventListener('abort', end);
    guard.restore();
  }
}

/**
 * The protocol layer's handling of a request, past its checks of which kind of message it is (each
 * a zod parse; shapes.ts has told already). `_onrequest` is the SDK's own, private: the version
 * check in test/mcp/server.test.ts has it read again on an upgrade, and an SDK without it (renamed)
 * gets `undefined` here: every message then takes the public `onmessage` path, slower but the same.
 */
export function requestPathOf(server: Server): ((message: JSONRPCRequest) => void) | undefined {
  const protocol = server as unknown as { _onrequest?: (message: JSONRPCRequest, extra?: unknown) => void };
  if (typeof protocol._onrequest !== 'function') return undefined;
  return (message) => protocol._onrequest!(message);
}

/**
 * MCP over stdin/stdout: newline-delimited JSON-RPC, as the SDK's `StdioServerTransport` speaks it,
 * without its costs on the hot path. A line longer than `max` bytes is dropped and reported through
 * `onOversize`, and the lines after it are read as usual (past its buffer limit the SDK's transport
 * closes without a word, and the server with it). A plain request (shapes.ts) goes straight to
 * `request`, the protocol layer's own request path, once the server has set it; any other message
 * is parsed with the SDK's schema and handed to `onmessage`, so it is taken or refused exactly as
 * there. Answers go to `send`, the stdout guard's: the answers of a tick leave in one write.
 */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The protocol layer's handling of a request it has recognised as one (`Protocol._onrequest`). */
  request?: (message: JSONRPCRequest) => void;
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** Inside a line already reported: drop bytes until its newline. */
  private skipping = false;
  private readonly input: Readable;
  private readonly out: (chunk: string) => Promise<void>;
  private readonly max: number;
  private readonly onOversize: () => void;

  constructor(opts: { input: Readable; send: (chunk: string) => Promise<void>; max: number; onOversize: () => void }) {
    this.input = opts.input;
    this.out = opts.send;
    this.max = opts.max;
    this.onOversize = opts.onOversize;
  }

  async start(): Promise<void> {
    this.input.on('data', this.ondata);
    this.input.on('error', this.onInputError);
  }

  async close(): Promise<void> {
    this.input.off('data', this.ondata);
    this.input.off('error', this.onInputError);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.held = [];
    this.heldBytes = 0;
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.out(`${JSON.stringify(message)}\n`);
  }

  private readonly onInputError = (error: Error) => this.onerror?.(error);

  private readonly ondata = (chunk: Buffer) => {
    for (let start = 0; start < chunk.length; ) {
      const newline = chunk.indexOf(0x0a, start);
      const complete = newline !== -1;
      const end = complete ? newline + 1 : chunk.length;
      if (this.skipping) {
        this.skipping = !complete;
      } else if (this.heldBytes + end - start - (complete ? 1 : 0) > this.max) {
        this.held = [];
        this.heldBytes = 0;
        this.skipping = !complete;
        this.onOversize();
      } else if (!complete) {
        this.held.push(chunk.subarray(start));
        this.heldBytes += end - start;
      } else if (this.held.length) {
        // The end of a line begun in an earlier read (always the first line of this one).
        const line = Buffer.concat([...this.held, chunk.subarray(start, newline)]);
        this.held = [];
        this.heldBytes = 0;
        this.line(line.toString('utf8'));
      } else {
        this.line(chunk.toString('utf8', start, newline));
      }
      start = end;
    }
  };

  private line(text: string): void {
    let message: unknown;
    try {
      message = JSON.parse(text.endsWith('\r') ? text.slice(0, -1) : text);
    } catch (error) {
      this.onerror?.(error as Error);
      return;
    }
    // Called from the stdin listener: a throw on the way in would be the process's uncaught
    // exception, and would drop the lines after it in the same read.
    try {
      if (this.request && isPlainRequest(message)) {
        this.request(message);
        return;
      }
      const parsed = JSONRPCMessageSchema.safeParse(message);
      if (parsed.success) this.onmessage?.(parsed.data);
      else this.onerror?.(parsed.error);
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
