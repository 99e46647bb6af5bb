/**
 * The audit trail: one JSON line per policy decision and per call outcome (and per plugin crash,
 * timeout or quarantine), appended through winston to its own file. Nothing of an input is lost
 * silently: the hash covers all of it, the line keeps it up to a cap and says when it was cut.
 */
import { hash } from 'node:crypto';
import { closeSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';
import type Winston from 'winston';
import { hostError, messageOf } from './errors.ts';
import { loadWinston } from './log.ts';
import { openHostFile } from './paths.ts';

/**
 * One line of the audit trail (docs/policy.md, "The audit trail"). `decision`: the policy's verdict on a call, with its
 * input; `call`: how the call ended; `plugin`: a plugin's crash, timeout or quarantine. Every line
 * gets `time` (ISO 8601) first; the other fields are the writer's.
 */
export interface AuditRecord {
  event: 'decision' | 'call' | 'plugin';
  [key: string]: unknown;
}

export interface AuditSink {
  /** False when auditing is off: the dispatcher then skips building records. */
  readonly enabled: boolean;
  /** Never throws; after `close()` records are dropped (and reported once). */
  write(record: AuditRecord): void;
  /** Flushes the file and ends the stream. Never rejects. */
  close(): Promise<void>;
}

export const NO_AUDIT: AuditSink = { enabled: false, write() {}, async close() {} };

/** The cap on the input kept in a record when `log.auditInputCap` says nothing: 16 KiB of UTF-8. */
export const DEFAULT_AUDIT_INPUT_CAP = 16 * 1024;

/** How an input appears in a record: the hash and size cover all of it, `input` keeps the first `cap` bytes. */
export interface AuditedInput {
  /** Hex SHA-256 of the whole canonical input (UTF-8). */
  inputSha256: string;
  inputBytes: number;
  input: string;
  /** Present when `input` was cut at the cap (never inside a character). */
  inputTruncated?: true;
}

export function auditedInput(canonical: string, cap: number): AuditedInput {
  const inputSha256 = hash('sha256', canonical, 'hex');
  const inputBytes = Buffer.byteLength(canonical, 'utf8');
  if (inputBytes <= cap) return { inputSha256, inputBytes, input: canonical };
  const bytes = Buffer.from(canonical, 'utf8'); // only a long input pays for the copy
  let end = cap;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // back off a UTF-8 continuation byte
  return { inputSha256, inputBytes: bytes.length, input: bytes.toString('utf8', 0, end), inputTruncated: true };
}

export interface AuditSinkOptions {
  /** Told when the file cannot be written or flushed; the host logs it. The sink itself never throws. */
  onError?: (error: Error) => void;
  /** How long `close()` waits for the flush before giving up (and reporting it). Default 5 s. */
  closeTimeoutMs?: number;
  /** The workspace: no directory between it and the file may be a symlink (`openHostFile`). Default: the file's directory. */
  workspace?: string;
}

const LINES = Symbol('audit lines');
/** How long audit records wait to be written together. */
const AUDIT_BATCH_MS = 5;
/**
 * A batch is written at once when it holds this many lines: calls that settle without ever yielding
 * to the timers (an embedder awaiting `host.call` in a loop) would otherwise pile up lines unwritten.
 */
const AUDIT_BATCH_LINES = 256;

/**
 * A stream that appends with a synchronous write: an audit block reaches the kernel before the
 * turn ends (it survives the host crashing a moment later), and no thread-pool round trip sits
 * beside every call (fs.WriteStream's costs more than the call it records).
 */
function appendStream(fd: number): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      try {
        for (let at = 0; at < chunk.length; ) at += writeSync(fd, chunk, at);
        done();
      } catch (error) {
        done(error as Error);
      }
    },
    final(done) {
      try {
        closeSync(fd);
        done();
      } catch (error) {
        done(error as Error);
      }
    },
  });
}
const MESSAGE = Symbol.for('message'); // what winston's transports write

/** A record as written, with the moment it was written. */
interface Stamped {
  time: number;
  record: AuditRecord;
}

let lastTime = NaN;
let lastIso = '';
/** ISO 8601 for an epoch millisecond; a batch's lines mostly share one, and toISOString costs more than the JSON around it. */
function isoTime(time: number): string {
  if (time !== lastTime) {
    lastTime = time;
    lastIso = new Date(time).toISOString();
  }
  return lastIso;
}

/** Characters JSON writes as they are: printable ASCII but `"` and `\\`. */
const VERBATIM = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * A record's line, `time` first: exactly `JSON.stringify({ time, ...record })`, written by hand for
 * the flat records the host writes (strings, numbers, booleans), where it costs half as much. Any
 * other value goes through `JSON.stringify`, and a string with anything to escape too.
 */
export function auditLine(time: number, record: AuditRecord): string {
  let line = `{"time":"${isoTime(time)}"`;
  for (const key of Object.keys(record)) {
    const value = record[key];
    let text: string;
    switch (typeof value) {
      case 'string':
        text = VERBATIM.test(value) ? `"${value}"` : JSON.stringify(value);
        break;
      case 'number':
        text = Number.isFinite(value) ? String(value) : 'null';
        break;
      case 'boolean':
        text = value ? 'true' : 'false';
        break;
      case 'undefined':
      case 'function':
      case 'symbol':
        continue; // JSON leaves these keys out
      default:
        text = JSON.stringify(value); // objects (their own toJSON included); a BigInt throws, as it would there
    }
    line += `,${VERBATIM.test(key) ? `"${key}"` : JSON.stringify(key)}:${text}`;
  }
  return `${line}}`;
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/**
 * Appends JSON lines to `file` through winston; `close()` resolves once they are written.
 *
 * The file is opened here, synchronously: a trail that cannot be written stops the host from
 * starting (a config error naming the file), rather than losing records in silence. In the workspace
 * it is opened without following links (`openHostFile`): a symlinked `.rousseau` is refused. winston's File
 * transport opens lazily and swallows stream errors, so we own the stream and hand it to a Stream
 * transport: every later write error reaches `onError`.
 *
 * Records are stamped with the time at once, and serialised and handed to winston every
 * AUDIT_BATCH_MS, as one block of lines: the file holds the same lines, the host pays one write per
 * batch instead of two per call (on 2 cores a write beside every call showed as ~80 µs on an MCP
 * round trip), and the JSON is built after the call has answered, not on its path. `close()` hands
 * over what is pending before it ends the stream, and so does the process exiting.
 */
export function createAuditSink(
  file: string,
  { onError = () => {}, closeTimeoutMs = 5000, workspace = dirname(file) }: AuditSinkOptions = {},
): AuditSink {
  let fd: number;
  try {
    fd = openHostFile(file, workspace);
  } catch (error) {
    throw hostError(
      'RH_ERR_CONFIG_INVALID',
      [`(log.audit: ${file})`, `  cannot open the audit file for appending: ${messageOf(error)}`],
      error,
    );
  }
  let failed: Error | undefined;
  const fail = (error: Error) => {
    if (failed) return;
    failed = error;
    onError(error);
  };
  const stream = appendStream(fd);
  const winston = loadWinston();
  const line = winston.format((info) => {
    (info as Record<symbol, unknown>)[MESSAGE] = (info as Record<symbol, unknown>)[LINES];
    return info;
  });
  const transport = new winston.transports.Stream({ stream, format: line(), eol: '\n' });
  const logger = winston.createLogger({
    level: 'audit',
    levels: { audit: 0 },
    transports: [transport],
    exitOnError: false,
  });
  // Without listeners a write error would be an uncaught 'error' event: the host must survive it.
  stream.on('error', fail);
  logger.on('error', fail);
  transport.on('error', fail);
  let closing: Promise<void> | undefined;
  let pending: Stamped[] = [];
  let timer: NodeJS.Timeout | undefined;
  /** The pending records as lines, emptying the batch; a record that cannot be serialised is reported, the others kept. */
  const take = (): string => {
    const batch = pending;
    pending = [];
    clearTimeout(timer);
    const lines: string[] = [];
    for (const { time, record } of batch) {
      try {
        lines.push(auditLine(time, record));
      } catch (error) {
        fail(error as Error);
      }
    }
    return lines.join('\n');
  };
  const flush = () => {
    if (pending.length === 0) return;
    const lines = take();
    if (!lines) return;
    try {
      logger.log({ level: 'audit', message: '', [LINES]: lines } as Winston.LogEntry);
    } catch (error) {
      fail(error as Error);
    }
  };

  // The host may exit (process.exit, an uncaught error) inside a batch window: write what is
  // pending straight to the file then, since nothing asynchronous runs in an 'exit' handler.
  const flushAtExit = () => {
    if (pending.length === 0) return;
    try {
      const lines = take();
      if (lines) writeSync(fd, `${lines}\n`);
    } catch {
      // exiting: nowhere left to report it
    }
  };
  process.on('exit', flushAtExit);

  return {
    enabled: true,
    write(record) {
      if (closing) {
        fail(new Error(`audit record after close dropped: ${safeStringify(record)}`));
        return;
      }
      const count = pending.push({ time: Date.now(), record });
      if (count === 1) timer = setTimeout(flush, AUDIT_BATCH_MS).unref();
      else if (count >= AUDIT_BATCH_LINES) flush();
    },
    close() {
      process.off('exit', flushAtExit);
      if (!closing) flush();
      closing ??= new Promise<void>((resolve) => {
        const giveUp = setTimeout(() => {
          fail(new Error(`audit file ${file} was not flushed within ${closeTimeoutMs} ms`));
          resolve();
        }, closeTimeoutMs);
        const done = () => {
          clearTimeout(giveUp);
          resolve();
        };
        // winston is done when its transport finishes; the file, when our stream has flushed.
        transport.once('finish', () =>
          stream.end((error?: Error | null) => {
            if (error) fail(error);
            done();
          }),
        );
        stream.once('error', done);
        try {
          logger.end();
        } catch (error) {
          fail(error as Error);
          done();
        }
      });
      return closing;
    },
  };
}
