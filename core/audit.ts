/**
 * The audit trail's file: the lines (audit-lines.ts) of each policy decision and call outcome (and
 * each plugin crash, timeout or quarantine), appended in batches, encoded as they are made. Nothing
 * is dropped without a word: a record after close is reported, a write that fails is told.
 */
// The module's binding, not the global: `globalThis.Buffer` is an accessor that every read on the call path goes through.
import { Buffer } from 'node:buffer';
import { closeSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { type AuditEntry, type AuditRecord, isoTime, lineHead, recordLine } from './audit-lines.ts';
import { hostError, messageOf } from './errors.ts';
import { openHostFile } from './paths.ts';

export interface AuditSink {
  /** False when auditing is off: the dispatcher then skips building records. */
  readonly enabled: boolean;
  /** Never throws; after `close()` records are dropped (and reported once). */
  write(record: AuditRecord | AuditEntry): void;
  /**
   * Resolves once the records written so far are in the file: they go once the microtasks of this
   * turn have run instead of waiting out the batch, in one write for every caller asking in this
   * turn. Never rejects.
   */
  written(): Promise<void>;
  /**
   * Writes the records written so far now, in this call: for a front end that sends its answers
   * itself and writes the audit just before (stdio). Never throws.
   */
  flush(): void;
  /** Writes what is pending and closes the file. Never rejects. */
  close(): Promise<void>;
}

export const NO_AUDIT: AuditSink = {
  enabled: false,
  write() {},
  written: async () => {},
  flush() {},
  async close() {},
};

export interface AuditSinkOptions {
  /** The host's id, written on every line as `host` (docs/serve.md, "Several hosts behind a load balancer"). */
  host?: string;
  /** Told when the file cannot be written or closed; the host logs it. The sink itself never throws. */
  onError?: (error: Error) => void;
  /** The workspace: no directory between it and the file may be a symlink (`openHostFile`). Default: the file's directory. */
  workspace?: string;
}

/** How long audit records wait to be written together. */
const AUDIT_BATCH_MS = 5;
/**
 * A batch is written at once when it holds this many lines: calls that settle without ever yielding
 * to the timers (an embedder awaiting `host.call` in a loop) would otherwise pile up lines unwritten.
 */
const AUDIT_BATCH_LINES = 256;

/** What `written()` answers when nothing is pending. */
const DONE = Promise.resolve();
/** What a record dropped after close held, for the report. */
function describe(record: AuditRecord | AuditEntry): string {
  try {
    return typeof record === 'function' ? record(lineHead(isoTime(Date.now()))) : JSON.stringify(record);
  } catch {
    return String(record);
  }
}

/** The bytes a batch is encoded into, reused batch after batch; grown for a batch that needs more. */
const BLOCK_BYTES = 64 * 1024;

/**
 * Lines are joined into runs of about this many UTF-16 units before they are encoded: each encode
 * is a call into C++ that costs about what building a short line does, and a run much longer than
 * this costs more to flatten (a string of many pieces) than it saves in calls.
 */
const RUN_UNITS = 4096;

/**
 * Characters JSON leaves raw inside a string that readers other than a JSON parser end a line at
 * (Python's `splitlines`, editors, a JS regex's `^`/`$` under the m flag): a caller's name or input
 * holding one would be read as two lines. Outside a string a JSON text is ASCII, so each is written
 * as its `\u` escape wherever it is, and the line parses to the same values.
 */
const SPLITTER = /[\u0085\u2028\u2029]/g;
const SPLITTERS = ['\u0085', '\u2028', '\u2029'].map((c) => Buffer.from(c, 'utf8'));

/**
 * A batch of lines as UTF-8, encoded run by run into one reused buffer as the lines are made:
 * building one string of a whole batch first and encoding that costs ten times more (flattening a
 * string of many pieces is slow), and more than the call the lines record.
 */
class Block {
  private bytes = Buffer.allocUnsafe(BLOCK_BYTES);
  length = 0;

  /** `text`: whole lines, each ending in `\n`. */
  append(text: string): void {
    const start = this.length;
    this.write(text);
    // All ASCII (as many bytes as units) holds none; otherwise the bytes are searched, natively.
    if (this.length - start === text.length) return;
    const written = this.bytes.subarray(start, this.length);
    if (!SPLITTERS.some((splitter) => written.includes(splitter))) return;
    this.length = start;
    this.write(text.replace(SPLITTER, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
  }

  private write(text: string): void {
    // A UTF-16 unit takes at most 3 bytes of UTF-8 (a surrogate pair, 4 for 2 units).
    const room = text.length * 3;
    if (this.bytes.length - this.length < room) {
      const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + room));
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    this.length += this.bytes.write(text, this.length);
  }

  /** Writes the block at the file's end (a write may take only part of it), and empties it. */
  writeTo(fd: number): void {
    const end = this.length;
    this.length = 0;
    for (let at = 0; at < end; ) at += writeSync(fd, this.bytes, at, end - at);
    // One batch of long inputs should not keep its memory for the life of the host.
    if (this.bytes.length > BLOCK_BYTES * 16) this.bytes = Buffer.allocUnsafe(BLOCK_BYTES);
  }
}

/**
 * Appends JSON lines to `file`; `close()` resolves once they are written.
 *
 * The file is opened here, synchronously: a trail that cannot be written stops the host from
 * starting (a config error naming the file), rather than losing records in silence. In the workspace
 * it is opened without following links (`openHostFile`): a symlinked `.rousseau` is refused.
 *
 * A record is only stamped with the time when written; the lines are built and written every
 * AUDIT_BATCH_MS (or every AUDIT_BATCH_LINES records), as one block with one synchronous write:
 * the file holds the same lines, the host pays one write per batch instead of two per call (on 2
 * cores a write beside every call showed as ~80 µs on an MCP round trip), the JSON is built after
 * the call has answered, not on its path, and a block reaches the kernel before the turn ends (it
 * survives the host crashing a moment later). `close()` writes what is pending, and so does the
 * process exiting. A write error goes to `onError` (once), and the calls go on.
 */
export function createAuditSink(
  file: string,
  { host, onError = () => {}, workspace = dirname(file) }: AuditSinkOptions = {},
): AuditSink {
  let fd: number;
  try {
    // Owner only when it makes the file: its lines hold tools' input (commands, file contents).
    fd = openHostFile(file, workspace, 'append', 0o600);
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
  let closed = false;
  // Two arrays rather than one object per record: the batch is the only thing a call allocates here.
  let records: (AuditRecord | AuditEntry)[] = [];
  let times: number[] = [];
  // The batch window's timer is armed only for lines still pending once the event loop's turn is
  // over (an immediate looks): a front end writes its answers' lines before it sends them, and a
  // timer armed for those lines would wake an idle host to write nothing. Node keeps a cleared
  // timer's wake-up, so clearing does not help: a client calling one at a time over stdio paid for
  // that wake-up (a switch, an epoll, a cold event loop) in its round trips, ~0.35 epoll waits a call.
  let timer: NodeJS.Timeout | undefined;
  let looking = false;
  const onTimer = () => {
    timer = undefined;
    flush();
  };
  const armIfPending = () => {
    looking = false;
    // The window counts from the batch's first line, not from here: a long turn has used part of it.
    if (records.length > 0 && !closed)
      timer ??= setTimeout(onTimer, Math.max(0, AUDIT_BATCH_MS - (Date.now() - times[0]!))).unref();
  };
  const block = new Block();
  // The head of a batch's lines: they mostly share their millisecond, so it is built about once a batch.
  let headTime = Number.NaN;
  let head = '';
  /** Writes the pending records, emptying the batch; a record that cannot be serialised is reported, the others kept. */
  const flush = () => {
    if (records.length === 0) return;
    const batch = records;
    const stamps = times;
    records = [];
    times = [];
    let run = '';
    for (let i = 0; i < batch.length; i++) {
      try {
        const record = batch[i]!;
        if (stamps[i] !== headTime) {
          headTime = stamps[i]!;
          head = lineHead(isoTime(headTime), host);
        }
        run += `${typeof record === 'function' ? record(head) : recordLine(head, record)}\n`;
      } catch (error) {
        fail(error as Error);
      }
      if (run.length >= RUN_UNITS) {
        block.append(run);
        run = '';
      }
    }
    if (run !== '') block.append(run);
    if (block.length === 0) return;
    try {
      block.writeTo(fd);
    } catch (error) {
      fail(error as Error);
    }
  };
  // The host may exit (process.exit, an uncaught error) inside a batch window: the pending lines
  // are written then, since a write here is synchronous.
  process.on('exit', flush);
  let soon: Promise<void> | undefined;

  return {
    enabled: true,
    write(record) {
      if (closed) {
        fail(new Error(`audit record after close dropped: ${describe(record)}`));
        return;
      }
      const count = records.push(record);
      times.push(Date.now());
      if (count === 1 && !looking && timer === undefined) {
        looking = true;
        // Not unref'd: the loop would then sleep in its poll, and arm the window only when woken.
        setImmediate(armIfPending);
      } else if (count >= AUDIT_BATCH_LINES) flush();
    },
    written() {
      if (records.length === 0) return soon ?? DONE;
      // Once this turn's microtasks have run, not on the next turn: the calls a read of requests
      // started settle in them and share the write, and their answers leave in this turn, not after
      // another trip round the event loop (over MCP that trip cost more than the audit itself).
      soon ??= new Promise<void>((resolve) =>
        process.nextTick(() => {
          soon = undefined;
          flush();
          resolve();
        }),
      );
      return soon;
    },
    flush,
    async close() {
      if (closed) return;
      closed = true;
      process.off('exit', flush);
      clearTimeout(timer);
      flush();
      try {
        closeSync(fd);
      } catch (error) {
        fail(error as Error);
      }
    },
  };
}
