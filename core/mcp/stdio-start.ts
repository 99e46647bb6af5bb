/**
 * `start --mcp`'s first moments: the client's handshake (`initialize`, `notifications/initialized`,
 * `ping`) is read and answered in plain code (handshake.ts) while the MCP SDK is not loaded yet, and
 * the session goes to the SDK's server (stdio.ts) when a message needs it or once every plugin is
 * in, whichever comes first. Importing the SDK costs about a third of a second of CPU, a second on
 * a busy machine, and clients probe with timeouts as short as a second; waiting for plugins to load
 * first keeps the import from slowing an inline plugin's load on the same thread. A session that
 * ends within its handshake (a probe, a client that gives up) never loads the SDK.
 */
import type { Readable } from 'node:stream';
import type { Host } from '../host.ts';
import { answerLine, readHandshake, STDIO_LIST_CHANGED } from './handshake.ts';
import { guardStdout } from './stdout-guard.ts';

/** A longer first line is no handshake: the SDK's transport reads it (and drops it past its own limit). */
const HANDSHAKE_MAX_LINE_BYTES = 64 * 1024;

/**
 * Serves the host on stdin/stdout as `serveMcpStdio` (stdio.ts) does, answering the handshake at
 * once; resolves when the client disconnects (stdin ends) or `signal` aborts, and rejects with the
 * host's error when its config fails to load.
 */
export async function startMcpStdio(
  host: Host | Promise<Host>,
  opts: { signal?: AbortSignal; askClient?: boolean } = {},
): Promise<void> {
  const ready = Promise.resolve(host);
  const guard = guardStdout();
  const reader = new HandshakeReader(process.stdin, guard.send);
  const aborted = new Promise<'aborted'>((resolve) => {
    if (opts.signal?.aborted) resolve('aborted');
    opts.signal?.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  const loaded = ready.then(
    (h) =>
      h.ready.then(
        () => 'loaded' as const,
        () => 'loaded' as const,
      ),
    () => 'failed' as const,
  );
  try {
    const why = await Promise.race([reader.stopped, loaded, aborted]);
    if (why === 'needed' || why === 'loaded') {
      const { serveMcpStdio } = await import('./stdio.ts');
      // The client may have left, or the signal fired, while the SDK loaded.
      if (!reader.ended && !opts.signal?.aborted) {
        ready.then(
          (h) => h.log.debug(`MCP stdio: the SDK's server takes the session over (${HANDOVER_REASON[why]})`),
          () => {},
        );
        const replayed = reader.handOver();
        return await serveMcpStdio(ready, { ...opts, replayed });
      }
    }
    await ready; // the host's own error, when it failed to load
  } finally {
    reader.close();
    guard.restore();
  }
}

const HANDOVER_REASON = { needed: 'a message needs it', loaded: 'every plugin is in' };

/**
 * Reads stdin's first lines while they are handshake messages, answering each request; stops at
 * the first line that is not one (`stopped` resolves `needed`) or when stdin ends (`ended`).
 * `handOver` gives back what the SDK's server must read: stdin's unread bytes, after the
 * handshake's `initialize` request (under an id of its own, whose answer the session drops) and
 * `initialized` notification, which put the server in the state its own handshake would have.
 */
class HandshakeReader {
  readonly stopped: Promise<'needed' | 'ended'>;
  ended = false;
  private resolve!: (why: 'needed' | 'ended') => void;
  private pending: Buffer = Buffer.alloc(0);
  private readonly replay: string[] = [];
  /** The handshake messages replayed so far: each at most once. */
  private readonly seen = new Set<'initialize' | 'notifications/initialized'>();
  /** The result the replayed `initialize` was answered with, by the id it is replayed under. */
  private readonly answers = new Map<string, unknown>();
  private reading = true;
  private readonly input: Readable;
  private readonly send: (chunk: string) => Promise<void>;

  constructor(input: Readable, send: (chunk: string) => Promise<void>) {
    this.input = input;
    this.send = send;
    this.stopped = new Promise((resolve) => (this.resolve = resolve));
    input.on('data', this.ondata);
    input.once('end', this.onend);
    input.once('close', this.onend);
    input.on('error', this.onend);
  }

  /** Puts the unread lines back on stdin (paused, so the transport reads them first); returns the answers to drop. */
  handOver(): Map<string, unknown> {
    this.close();
    const lines = Buffer.from(this.replay.join(''));
    const unread = Buffer.concat([lines, this.pending]);
    if (unread.length) this.input.unshift(unread);
    return this.answers;
  }

  close(): void {
    this.stopReading();
    this.input.off('end', this.onend);
    this.input.off('close', this.onend);
    this.input.off('error', this.onend);
  }

  private stopReading(): void {
    if (!this.reading) return;
    this.reading = false;
    this.input.off('data', this.ondata);
    this.input.pause();
  }

  private readonly onend = () => {
    this.ended = true;
    this.resolve('ended');
  };

  private readonly ondata = (chunk: Buffer) => {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    for (;;) {
      const newline = this.pending.indexOf(0x0a);
      if (newline === -1) {
        if (this.pending.length > HANDSHAKE_MAX_LINE_BYTES) this.need();
        return;
      }
      if (!this.take(this.pending.toString('utf8', 0, newline))) return this.need();
      this.pending = this.pending.subarray(newline + 1);
    }
  };

  private need(): void {
    this.stopReading();
    this.resolve('needed');
  }

  /** Answers or keeps one line; false when it is no handshake message. */
  private take(text: string): boolean {
    let message: unknown;
    try {
      message = JSON.parse(text.endsWith('\r') ? text.slice(0, -1) : text);
    } catch {
      return false; // the SDK's transport reports it
    }
    const handshake = readHandshake(message, STDIO_LIST_CHANGED);
    // Pings are answered and forgotten; what is replayed is kept until the handover, so a second
    // initialize or initialized (which no client needs) goes to the SDK: 300,000 initialize
    // requests held 411 MiB here while the plugins loaded.
    if (!handshake || (handshake.method !== 'ping' && this.seen.has(handshake.method))) return false;
    if (handshake.method === 'ping') {
      void this.send(answerLine(handshake.id, {}));
      return true;
    }
    this.seen.add(handshake.method);
    if (handshake.method === 'initialize') {
      void this.send(answerLine(handshake.id, handshake.result));
      // Unguessable: the client could otherwise cancel the replayed request by its id (its answer
      // would never come) or have an answer of its own dropped in its place.
      const id = `rousseau-host/handshake-${crypto.randomUUID()}`;
      this.answers.set(id, handshake.result);
      this.replay.push(`${JSON.stringify({ ...(message as object), id })}\n`);
    } else {
      this.replay.push(`${text}\n`);
    }
    return true;
  }
}
