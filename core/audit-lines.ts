/**
 * What an audit line says: the records' fields in the order they are written, the input as a line
 * keeps it (hashed whole, kept up to a cap), and the time and host every line begins with. The
 * dispatcher's two lines per call are built field by field, not serialised: that costs more than
 * the call they record. audit.ts writes the lines to the file.
 */
// The module's binding, not the global: `globalThis.Buffer` is an accessor that every read on the call path goes through.
import { Buffer } from 'node:buffer';
import type { ResultCode } from './errors.ts';

/**
 * One line of the audit trail (docs/policy.md, "The audit trail"). `decision`: the policy's verdict on a call, with its
 * input; `call`: how the call ended; `plugin`: a plugin's crash, timeout or quarantine. Every line
 * gets `time` (ISO 8601) first, then `host` when the sink has a host id; the other fields are the writer's.
 */
export interface AuditRecord {
  event: 'decision' | 'call' | 'plugin';
  [key: string]: unknown;
}

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
export function isoTime(time: number): string {
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

/** A record's line after its head, as `JSON.stringify` writes the record. */
export function recordLine(head: string, record: AuditRecord): string {
  const json = JSON.stringify(record);
  return json.length > 2 ? `${head},${json.slice(1)}` : `${head}}`;
}
