/**
 * The audit trail: one JSON line per policy decision and per call outcome (and per plugin crash,
 * timeout or quarantine), appended in batches to its own file. Nothing of an input is lost
 * silently: the hash covers all of it, the line keeps it up to a cap and says when it was cut.
 */
// The module's binding, not the global: `globalThis.Buffer` is an accessor that every read on the call path goes through.
import { Buffer } from 'node:buffer';
import { closeSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { hostError, messageOf, type ResultCode } from './errors.ts';
import { openHostFile } from './paths.ts';

/**
 * One line of the audit trail (docs/policy.md, "The audit trail"). `decision`: the policy's verdict on a call, with its
 * input; `call`: how the call ended; `plugin`: a plugin's crash, timeout or quarantine. Every line
 * gets `time` (ISO 8601) first, then `host` when the sink has a host id; the other fields are the writer's.
 */
export interface AuditRecord {
  event: 'decision' | 'call' | 'plugin';
  [key: string]: unknown;
}

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

/** `node:crypto`, taken at the first audited input, not imported: a host that audits nothing does not pay for loading it. */
let crypto: typeof import('node:crypto') | undefined;

export function auditedInput(canonical: string, cap: number): AuditedInput {
  crypto ??= process.getBuiltinModule('node:crypto');
  const inputSha256 = crypto.hash('sha256', canonical, 'hex');
  const inputBytes = Buffer.byteLength(canonical, 'utf8');
  if (inputBytes <= cap) return { inputSha256, inputBytes, input: canonical };
  const bytes = Buffer.from(canonical, 'utf8'); // only a long input pays for the copy
  let end = cap;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // back off a UTF-8 continuation byte
  return { inputSha256, inputBytes: bytes.length, input: bytes.toString('utf8', 0, end), inputTruncated: true };
}

/**
 * A call's input as its lines keep it, worked out once, when the first of them is written: the
 * hash is work for the batch, not for the call.
 */
export class AuditInput {
  private readonly canonical: string;
  private readonly cap: number;
  private kept?: AuditedInput;

  constructor(canonical: string, cap: number) {
    this.canonical = canonical;
    this.cap = cap;
  }

  get(): AuditedInput {
    this.kept ??= auditedInput(this.canonical, this.cap);
    return this.kept;
  }
}

/**
 * A line its writer builds from its own fields after the line's head (`lineHead`: `{"time":"…"`
 * and the host's id): the dispatcher's two lines per call, where serialising a record field by
 * field costs more than the call it records.
 */
export type AuditEntry = (head: string) => string;

/**
 * What every line begins with: `{"time":"…"` (ISO 8601), then `,"host":"…"` when there is a host
 * id; no closing brace. A sink builds it once per millisecond, not per line.
 */
export function lineHead(time: string, host?: string): string {
  return host === undefined ? `{"time":"${time}"` : `{"time":"${time}","host":${json(host)}`;
}

/**
 * A string as JSON: one with nothing to escape (printable ASCII but `"` and `\\`) as it is, any
 * other as `JSON.stringify` writes it. A loop: the fields are short, and a regex costs more to start
 * than these take to read.
 */
function json(value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(value);
  }
  return `"${value}"`;
}

/** The policy's verdict, and a call's result code: closed sets of plain words, written without escaping. */
type Verdict = 'allow' | 'ask' | 'deny';

/** `,"decision":"…"` for each verdict: the same few texts on every line. */
const DECISION: Record<Verdict, string> = {
  allow: ',"decision":"allow"',
  ask: ',"decision":"ask"',
  deny: ',"decision":"deny"',
};

/**
 * Milliseconds as JSON writes them, for a value rounded to the microsecond (the dispatcher's
 * `durationMs` and `approvalMs`): the whole milliseconds, then the fraction from a table. Turning a
 * double into its shortest text costs more than the rest of a line; an integer is cheap.
 */
function millis(ms: number): string {
  const micros = Math.round(ms * 1000);
  // Outside this range (never a duration), or not a whole number of microseconds: as JSON writes it.
  if (!(micros >= 0 && micros < 1e15) || micros / 1000 !== ms) return String(ms);
  const fraction = micros % 1000;
  return `${(micros - fraction) / 1000}${FRACTIONS[fraction]}`;
}

/** `''`, `.001` … `.999` without trailing zeros (`.5`, `.25`): the fraction of a millisecond value. */
const FRACTIONS = Array.from({ length: 1000 }, (_, i) =>
  i === 0 ? '' : `.${String(i).padStart(3, '0').replace(/0+$/, '')}`,
);

/**
 * `,"plugin":…,"tool":…` of one tool's lines, made once per tool rather than on each line. Keyed by
 * the tool, checked against the plugin (a reload may move a tool); only registered tools are kept
 * (an unknown name is the caller's, and would grow this without bound), and at most `TOOL_PIECES`.
 */
const toolPieces = new Map<string, { plugin: string; text: string }>();
const TOOL_PIECES = 1024;

function toolPiece(plugin: string | undefined, tool: string): string {
  if (plugin === undefined) return `,"tool":${json(tool)}`;
  const kept = toolPieces.get(tool);
  if (kept !== undefined && kept.plugin === plugin) return kept.text;
  const text = `,"plugin":${json(plugin)},"tool":${json(tool)}`;
  if (toolPieces.size >= TOOL_PIECES) toolPieces.clear();
  toolPieces.set(tool, { plugin, text });
  return text;
}

/** The fields of a `decision` line (docs/policy.md, "The audit trail"), in the order written. */
export interface DecisionFields {
  callId: string;
  sessionId?: string | undefined;
  /** The authenticated caller's name (docs/serve.md). */
  caller?: string | undefined;
  plugin: string;
  tool: string;
  input: AuditInput;
  decision: Verdict;
  rule?: string | undefined;
  reason?: string | undefined;
  answer?: string | undefined;
  /** Who answered an `ask`: `terminal`, `mcp-client`, or what the embedder's approver calls itself. */
  answeredBy?: string | undefined;
  approvalMs?: number | undefined;
  source?: string | undefined;
}

/**
 * The line is made of as few pieces as it can be (each `+` is a string of its own, flattened again
 * when the line is encoded): the fixed texts joined into one, the tool's from `toolPiece`.
 */
export function decisionEntry(d: DecisionFields): AuditEntry {
  return (head) => {
    const input = d.input.get();
    let line = `${head},"event":"decision","callId":${json(d.callId)}`;
    if (d.sessionId) line += `,"sessionId":${json(d.sessionId)}`;
    if (d.caller !== undefined) line += `,"caller":${json(d.caller)}`;
    line += `${toolPiece(d.plugin, d.tool)},"inputSha256":"${input.inputSha256}","inputBytes":${input.inputBytes},"input":${JSON.stringify(input.input)}`;
    if (input.inputTruncated) line += ',"inputTruncated":true';
    line += DECISION[d.decision];
    if (d.rule !== undefined) line += `,"rule":${json(d.rule)}`;
    if (d.reason) line += `,"reason":${json(d.reason)}`;
    if (d.answer) line += `,"answer":${json(d.answer)}`;
    if (d.answeredBy !== undefined) line += `,"answeredBy":${json(d.answeredBy)}`;
    if (d.approvalMs !== undefined) line += `,"approvalMs":${millis(d.approvalMs)}`;
    if (d.source) line += `,"source":${json(d.source)}`;
    return `${line}}`;
  };
}

/** The fields of a `call` line (docs/policy.md, "The audit trail"), in the order written. */
export interface CallFields {
  callId: string;
  sessionId?: string | undefined;
  caller?: string | undefined;
  /** Absent for an unknown tool. */
  plugin?: string | undefined;
  tool: string;
  /** The input of the call's own decision: the line ties to it by its hash. */
  input?: AuditInput | undefined;
  decision?: Verdict | undefined;
  rule?: string | undefined;
  outcome: 'ok' | 'error';
  code?: ResultCode | undefined;
  durationMs: number;
  approvalMs?: number | undefined;
  /** The result's content: the line says how many UTF-8 bytes it was. */
  content: string;
  truncated?: boolean | undefined;
}

export function callEntry(c: CallFields): AuditEntry {
  return (head) => {
    let line = `${head},"event":"call","callId":${json(c.callId)}`;
    if (c.sessionId) line += `,"sessionId":${json(c.sessionId)}`;
    if (c.caller !== undefined) line += `,"caller":${json(c.caller)}`;
    line += toolPiece(c.plugin, c.tool);
    if (c.input) line += `,"inputSha256":"${c.input.get().inputSha256}"`;
    if (c.decision !== undefined) line += DECISION[c.decision];
    if (c.rule !== undefined) line += `,"rule":${json(c.rule)}`;
    line += c.outcome === 'ok' ? ',"outcome":"ok"' : ',"outcome":"error"';
    if (c.code) line += `,"code":"${c.code}"`;
    line += `,"durationMs":${millis(c.durationMs)}`;
    if (c.approvalMs !== undefined) line += `,"approvalMs":${millis(c.approvalMs)}`;
    line += `,"bytes":${Buffer.byteLength(c.content)}`;
    if (c.truncated) line += ',"truncated":true';
    return `${line}}`;
  };
}

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

let lastTime = Number.NaN;
let lastIso = '';
let lastSecond = Number.NaN;
/** `lastIso` up to its milliseconds: `YYYY-MM-DDTHH:MM:SS.` */
let secondPrefix = '';
/**
 * ISO 8601 for an epoch millisecond; a batch's lines mostly share one, and toISOString costs more
 * than the JSON around it. Answered one call at a time, each batch has its own millisecond: within
 * a second only the milliseconds change, so only they are written out.
 */
function isoTime(time: number): string {
  if (time === lastTime) return lastIso;
  lastTime = time;
  const second = Math.floor(time / 1000);
  if (second === lastSecond && Number.isInteger(time)) {
    const ms = time - second * 1000;
    lastIso = `${secondPrefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
  } else {
    lastSecond = second;
    lastIso = new Date(time).toISOString();
    secondPrefix = lastIso.slice(0, -4);
  }
  return lastIso;
}

/**
 * A record's line, `time` first (then `host`, when given): exactly `JSON.stringify({ time, host, ...record })`,
 * without copying the record (a BigInt throws, as it would there).
 */
export function auditLine(time: number, record: AuditRecord, host?: string): string {
  return recordLine(lineHead(isoTime(time), host), record);
}

function recordLine(head: string, record: AuditRecord): string {
  const json = JSON.stringify(record);
  return json.length > 2 ? `${head},${json.slice(1)}` : `${head}}`;
}

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
