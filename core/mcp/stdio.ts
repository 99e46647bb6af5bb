/**
 * The host's tools over stdio (`start --mcp`): one long session on stdin/stdout, with stdout kept
 * for MCP messages alone (stdout-guard.ts). serve.ts is the Streamable HTTP front end; docs/mcp.md
 * says what each gives a client.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Host } from '../host.ts';
import { createMcpServer, watchToolChanges } from './server.ts';
import { guardStdout } from './stdout-guard.ts';

/** The longest message line read on stdio (the SDK's own buffer limit). */
const MCP_STDIO_MAX_LINE_BYTES = 10 * 1024 * 1024;

/**
 * Serves the host on stdin/stdout; resolves when the client disconnects (stdin ends) or `signal`
 * aborts. `host` may still be loading: `initialize` is answered at once; with its plugins loading
 * in the background, `tools/list` answers with the tools registered so far and each further plugin
 * is announced with `notifications/tools/list_changed`. A host whose config fails to load closes
 * the connection and rejects with its error.
 */
export async function serveMcpStdio(
  host: Host | Promise<Host>,
  opts: { signal?: AbortSignal; askClient?: boolean } = {},
): Promise<void> {
  let loaded: Host | undefined;
  // Every answer leaves in a write to stdout, and the audit lines written so far go to their file
  // just before it, in the same turn: one audit write for the answers of a tick, and no promise per
  // answer to wait for it. A host still loading has answered no call.
  const guard = guardStdout(() => loaded?.flushAudit());
  const ready = Promise.resolve(host);
  const server = createMcpServer(ready, {
    listChanged: true,
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
  const lines = new LineLimit(MCP_STDIO_MAX_LINE_BYTES, () => {
    const message = `a message line over the stdio limit of ${MCP_STDIO_MAX_LINE_BYTES} bytes (10 MiB) was dropped`;
    ready.then(
      (h) => h.log.warn(`MCP stdio: ${message}`),
      () => {},
    );
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
    await closed;
    await ready; // the host's own error, when it is why the server closed
  } finally {
    ended = true;
    stopWatching();
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
    // Whole lines go on together (`run` is where the pending ones begin): a read that holds many
    // messages stays one chunk for the SDK to split, instead of one chunk, and one copy, per line.
    let run = 0;
    for (let start = 0; start < chunk.length; ) {
      const newline = chunk.indexOf(0x0a, start);
      const complete = newline !== -1;
      const end = complete ? newline + 1 : chunk.length;
      if (this.skipping) {
        this.skipping = !complete;
        start = run = end;
      } else if (this.heldBytes + end - start - (complete ? 1 : 0) > this.max) {
        if (start > run) this.push(chunk.subarray(run, start));
        this.held = [];
        this.heldBytes = 0;
        this.skipping = !complete;
        this.onOversize();
        start = run = end;
      } else if (!complete) {
        if (start > run) this.push(chunk.subarray(run, start));
        this.held.push(chunk.subarray(start));
        this.heldBytes += end - start;
        start = run = end;
      } else if (this.held.length) {
        // The end of a line begun in an earlier read (always the first line of this one).
        this.push(Buffer.concat([...this.held, chunk.subarray(start, end)]));
        this.held = [];
        this.heldBytes = 0;
        start = run = end;
      } else {
        start = end;
      }
    }
    if (chunk.length > run) this.push(chunk.subarray(run));
    done();
  }
}
