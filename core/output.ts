/**
 * The result end of the call pipeline: what a tool returned (or how its run failed) read into the
 * call's result, and its text capped before it reaches the model. Both ends of a long text are
 * kept: the head says what the output is, the tail holds the error or the summary that long outputs
 * end with.
 */
import type { ResultCode } from './errors.ts';
import { messageOf } from './errors.ts';
import type { RunOutcome } from './runners/runner.ts';
import { jsonLongerThan } from './safe-json.ts';
import type { CallResult, Isolation } from './types.ts';

/** The default cap on a tool's output: 64 KiB, about 16k tokens. Configurable per plugin (`maxOutputBytes`). */
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;

export interface Capped {
  text: string;
  truncated: boolean;
}

/** Keeps at most `maxBytes` UTF-8 bytes of `text`: half from the head, half from the tail, a marker between. */
export function capOutput(text: string, maxBytes: number): Capped {
  if (text.length * 3 <= maxBytes) return { text, truncated: false }; // cannot be over: skip counting
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  const half = Math.floor(maxBytes / 2);
  const head = bytes.subarray(0, backToBoundary(bytes, half));
  const tailStart = forwardToBoundary(bytes, bytes.length - half);
  const tail = bytes.subarray(tailStart);
  const omitted = bytes.length - head.length - tail.length;
  const marker = `\n\n[… ${omitted} bytes omitted of ${bytes.length}: output capped at ${maxBytes} bytes, head and tail kept …]\n\n`;
  return { text: head.toString('utf8') + marker + tail.toString('utf8'), truncated: true };
}

/** The largest index ≤ i that starts a UTF-8 character. */
function backToBoundary(bytes: Buffer, i: number): number {
  while (i > 0 && (bytes[i]! & 0xc0) === 0x80) i--;
  return i;
}

/** The smallest index ≥ i that starts a UTF-8 character. */
function forwardToBoundary(bytes: Buffer, i: number): number {
  while (i < bytes.length && (bytes[i]! & 0xc0) === 0x80) i++;
  return i;
}

/** A stage of the call pipeline that ends the call: its result code and the text for the model. */
export interface Failed {
  ok: false;
  code: ResultCode;
  content: string;
}

/**
 * What every stage of a call yields (find, prepare, decide, approve, run, read the output): its
 * values beside `ok: true`, or the failure that ends the call. One discriminant, `ok`, all along.
 */
export type Step<T extends object = object> = ({ ok: true } & T) | Failed;

/** What the output stage needs of a tool's plugin. */
interface OutputLimits {
  isolation: Isolation;
  maxOutputBytes: number;
}

/** A runner's failure as the model reads it. */
export function outcomeFailure(name: string, outcome: Extract<RunOutcome, { ok: false }>): Failed {
  switch (outcome.code) {
    case 'tool_error':
      return { ok: false, code: 'tool_error', content: `Tool "${name}" failed: ${outcome.message}` };
    case 'timeout':
      return { ok: false, code: 'timeout', content: `Tool "${name}" timed out: ${outcome.message}` };
    case 'quarantined':
      return { ok: false, code: 'quarantined', content: `Tool "${name}" is unavailable: ${outcome.message}` };
    case 'crashed':
      return {
        ok: false,
        code: 'crashed',
        content: `Tool "${name}" crashed: ${outcome.message}. The plugin was restarted; you may retry once.`,
      };
  }
}

/**
 * Accepts `string` or `{ content, isError?, data? }`; anything else is the tool's error. An inline
 * tool hands over a live object: a getter that throws, or a Proxy, is the tool's error too, and
 * `data` is kept as a JSON copy, since a getter read again later (by `--json`, by MCP) could throw
 * or answer differently.
 */
export function normalise(name: string, plugin: OutputLimits, output: unknown): Step<{ result: CallResult }> {
  try {
    return readOutput(name, plugin, output);
  } catch (error) {
    return {
      ok: false,
      code: 'tool_error',
      content: `Tool "${name}" returned a value the host cannot read: ${messageOf(error)}`,
    };
  }
}

function readOutput(name: string, plugin: OutputLimits, output: unknown): Step<{ result: CallResult }> {
  let content: unknown = output;
  let isError = false;
  let data: unknown;
  if (output !== null && typeof output === 'object' && !Array.isArray(output)) {
    const o = output as { content?: unknown; isError?: unknown; data?: unknown };
    content = o.content;
    isError = o.isError === true;
    data = o.data;
  }
  if (typeof content !== 'string') {
    const got = output === null ? 'null' : Array.isArray(output) ? 'an array' : typeof output;
    return {
      ok: false,
      code: 'tool_error',
      content: `Tool "${name}" returned ${typeof output === 'object' && output !== null && !Array.isArray(output) ? 'an object without a string `content`' : got}; a tool must return a string or { content: string }.`,
    };
  }
  const cap = plugin.maxOutputBytes;
  const capped = capOutput(content.toWellFormed(), cap);
  const result: CallResult = { isError, content: capped.text, durationMs: 0 };
  if (isError) result.code = 'tool_error';
  if (capped.truncated) result.truncated = true;
  if (data !== undefined) {
    // Not for inline data: it is read once (a getter read twice may answer differently), and an
    // inline plugin shares the host's thread anyway; isolated data is plain, cloned values.
    if (plugin.isolation !== 'inline' && jsonLongerThan(data, cap)) {
      return {
        ok: false,
        code: 'output_too_large',
        content: `Tool "${name}" returned data whose JSON is over the plugin's cap of ${cap} bytes.`,
      };
    }
    let json: string | undefined;
    try {
      json = JSON.stringify(data);
    } catch (error) {
      return {
        ok: false,
        code: 'tool_error',
        content: `Tool "${name}" returned data that is not JSON: ${messageOf(error)}`,
      };
    }
    const size = Buffer.byteLength(json ?? '');
    if (size > cap) {
      return {
        ok: false,
        code: 'output_too_large',
        content: `Tool "${name}" returned ${size} bytes of data, over the plugin's cap of ${cap} bytes.`,
      };
    }
    if (json !== undefined) result.data = JSON.parse(json);
  }
  return { ok: true, result };
}
