/**
 * The result end of the call pipeline: what a tool returned (or how its run failed) read into the
 * call's result (text or content blocks, checked; data, checked against the tool's outputSchema),
 * and capped before it reaches the model (docs/plugins.md, "The output cap"). Both ends of a long
 * text are kept: the head says what the output is, the tail holds the error or the summary that
 * long outputs end with.
 */
// The module's binding, not the global: `globalThis.Buffer` is an accessor that every read on the call path goes through.
import { Buffer } from 'node:buffer';
import { CheckTooCostly } from './check-budget.ts';
import { type CheckedValidator, tooCostlyToCheck } from './shared-validators.ts';
import type { ContentBlock } from './contract.ts';
import { messageOf } from './errors.ts';
import type { RunOutcome } from './runners/runner.ts';
import { jsonLongerThan } from './safe-json.ts';
import type { CallResult, Isolation } from './types.ts';
import { blockText, decodedSize, textOf } from './block-text.ts';
import type { Failed, Step } from './step.ts';

/** The default cap on a tool's output: 64 KiB, about 16k tokens. Configurable per plugin (`maxOutputBytes`). */
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;

export interface Capped {
  text: string;
  truncated: boolean;
}

/** Keeps at most `maxBytes` UTF-8 bytes of `text`: half from the head, half from the tail, a marker between. */
export function capOutput(text: string, maxBytes: number): Capped {
  if (text.length * 3 <= maxBytes) return { text, truncated: false }; // cannot be over: skip counting
  const capped = capTexts([text], maxBytes);
  return { text: capped.texts[0]!, truncated: capped.truncated };
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

/** What the output stage needs of a tool: its name, its plugin's limits, its output schema's validator. */
export interface OutputTool {
  info: { name: string };
  plugin: { isolation: Isolation; maxOutputBytes: number };
  outputValidator?(): CheckedValidator;
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
        content: `Tool "${name}" crashed: ${outcome.message}. ${outcome.retry === false ? 'Do not retry it.' : 'The plugin was restarted; you may retry once.'}`,
      };
  }
}

/**
 * Accepts `string` or `{ content: string | ContentBlock[], isError?, data? }`; anything else is the
 * tool's error, and a malformed block or `data` that does not match the tool's `outputSchema` is
 * `invalid_output`. An inline tool hands over a live object: a getter that throws, or a Proxy, is
 * the tool's error too, and blocks and `data` are kept as copies, since a getter read again later
 * (by `--json`, by MCP) could throw or answer differently.
 */
export function normalise(tool: OutputTool, output: unknown): Step<{ result: CallResult }> {
  try {
    return readOutput(tool, output);
  } catch (error) {
    return {
      ok: false,
      code: 'tool_error',
      content: `Tool "${tool.info.name}" returned a value the host cannot read: ${messageOf(error)}`,
    };
  }
}

function readOutput(tool: OutputTool, output: unknown): Step<{ result: CallResult }> {
  const { name } = tool.info;
  let content: unknown = output;
  let isError = false;
  let data: unknown;
  if (output !== null && typeof output === 'object' && !Array.isArray(output)) {
    const o = output as { content?: unknown; isError?: unknown; data?: unknown };
    content = o.content;
    isError = o.isError === true;
    data = o.data;
  }
  const cap = tool.plugin.maxOutputBytes;
  let result: CallResult;
  if (typeof content === 'string') {
    const capped = capOutput(content.toWellFormed(), cap);
    result = { isError, content: capped.text, durationMs: 0 };
    if (capped.truncated) result.truncated = true;
  } else if (Array.isArray(content) && content !== output) {
    const blocks = readBlocks(name, content);
    if (!blocks.ok) return blocks;
    const capped = capBlocks(name, blocks.blocks, cap);
    if (!capped.ok) return capped;
    result = { isError, content: textOf(capped.blocks), durationMs: 0, blocks: capped.blocks };
    if (capped.truncated) result.truncated = true;
  } else {
    const got = output === null ? 'null' : Array.isArray(output) ? 'an array' : typeof output;
    return {
      ok: false,
      code: 'tool_error',
      content: `Tool "${name}" returned ${typeof output === 'object' && output !== null && !Array.isArray(output) ? 'an object whose `content` is neither a string nor an array of content blocks' : got}; a tool must return a string or { content: string | ContentBlock[] }.`,
    };
  }
  if (isError) result.code = 'tool_error';
  const validator = tool.outputValidator?.();
  if (data === undefined) {
    if (validator && !isError) {
      return {
        ok: false,
        code: 'invalid_output',
        content: `Tool "${name}" declares an outputSchema but returned no data: return { content, data } with data matching it.`,
      };
    }
    return { ok: true, result };
  }
  const read = readData(tool, data);
  if (!read.ok) return read;
  let kept: KeptData = read;
  if (kept.data !== undefined && validator && !isError) {
    const tooLarge = (why: string): Failed => ({
      ok: false,
      code: 'invalid_output',
      content: `Tool "${name}" returned data too large to check against its outputSchema: ${why}.`,
    });
    const tooBig = tooCostlyToCheck(validator, kept.data, Infinity, kept.json.length);
    if (tooBig) return tooLarge(tooBig);
    let valid: boolean;
    try {
      valid = validator.Check(kept.data);
    } catch (error) {
      if (error instanceof CheckTooCostly) return tooLarge(error.message);
      throw error;
    }
    if (!valid) {
      if (!kept.truncated) {
        const problems = validator.problems(kept.data).map((p) => `- ${p.pointer || '/'}: ${p.message}`);
        return {
          ok: false,
          code: 'invalid_output',
          content: `Tool "${name}" returned data that does not match its outputSchema:\n${problems.join('\n')}`,
        };
      }
      kept = LEFT_OUT; // cut to fit, it no longer matches (a `maxLength`, a `pattern`): left out rather than served wrong
    }
  }
  if (kept.truncated) result.dataTruncated = true;
  if (kept.data === undefined) {
    if (kept.truncated) addText(result, `[data left out: its JSON is over the plugin's output cap of ${cap} bytes]`);
    return { ok: true, result };
  }
  result.data = kept.data;
  // MCP's rule for structured results: the JSON is also given as text, for clients that read only text.
  if (validator && !hasText(result)) addText(result, kept.json);
  return { ok: true, result };
}

/** Whether the result carries any text of the tool's own. */
function hasText(result: CallResult): boolean {
  return result.blocks ? result.blocks.some((b) => b.type === 'text' && b.text !== '') : result.content !== '';
}

/** Adds a paragraph of the host's to a result's text (and a text block, when it has blocks). */
function addText(result: CallResult, text: string): void {
  result.content = result.content === '' ? text : `${result.content}\n\n${text}`;
  result.blocks?.push({ type: 'text', text });
}

/**
 * The data a result keeps, as a JSON copy and its text; `truncated` when it was over the cap: its
 * long strings were cut, or, with `data` undefined, it was left out.
 */
interface KeptData {
  data: unknown;
  json: string;
  truncated: boolean;
}

const LEFT_OUT: KeptData = Object.freeze({ data: undefined, json: '', truncated: true });

function readData(tool: OutputTool, data: unknown): Step<KeptData> {
  const cap = tool.plugin.maxOutputBytes;
  // Not for inline data: it is read once (a getter read twice may answer differently), and an
  // inline plugin shares the host's thread anyway; isolated data is plain, cloned values, which may
  // share references: a DAG whose JSON is far larger than the message that carried it.
  if (tool.plugin.isolation !== 'inline' && jsonLongerThan(data, cap)) return { ok: true, ...cutData(data, cap) };
  let json: string | undefined;
  try {
    json = JSON.stringify(data);
  } catch (error) {
    return {
      ok: false,
      code: 'tool_error',
      content: `Tool "${tool.info.name}" returned data that is not JSON: ${messageOf(error)}`,
    };
  }
  if (json === undefined) return { ok: true, data: undefined, json: '', truncated: false }; // a function, a symbol
  const parsed: unknown = JSON.parse(json);
  if (Buffer.byteLength(json) <= cap) return { ok: true, data: parsed, json, truncated: false };
  return { ok: true, ...cutData(parsed, cap) };
}

/** The shortest a string of data is cut to before the data is given up. */
const MIN_STRING_BYTES = 256;

/**
 * Data whose JSON is over the cap, its long strings cut (head and tail kept, as text is), shorter
 * at each try, until it fits: a file's text repeated in structured output still arrives. Each try
 * is a walk bounded by the cap, so a DAG or a huge array is given up quickly.
 */
function cutData(data: unknown, cap: number): KeptData {
  for (let limit = Math.floor(cap / 2); limit >= MIN_STRING_BYTES; limit = Math.floor(limit / 2)) {
    const budget = { left: cap };
    const cut = cutStrings(data, limit, budget);
    if (budget.left < 0) continue; // surely over: no need to write it out
    const json = JSON.stringify(cut);
    if (Buffer.byteLength(json) <= cap) return { data: JSON.parse(json), json, truncated: true };
  }
  return LEFT_OUT;
}

/**
 * A JSON copy of `value` with each string cut to `limit` bytes. `budget.left` counts down a lower
 * bound of its JSON's size; the walk stops once it is below zero.
 */
function cutStrings(value: unknown, limit: number, budget: { left: number }): unknown {
  if (budget.left < 0) return undefined;
  if (typeof value === 'string') {
    const text = capOutput(value, limit).text;
    budget.left -= text.length + 2;
    return text;
  }
  budget.left -= 1;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => cutStrings(item, limit, budget));
  const out: Record<string, unknown> = Object.create(null); // a key `__proto__` stays a key
  for (const [key, item] of Object.entries(value)) {
    budget.left -= key.length + 3;
    out[key] = cutStrings(item, limit, budget);
    if (budget.left < 0) break;
  }
  return out;
}

const BINARY = new Set(['image', 'audio']);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The tool's blocks, each checked and copied (known fields only), or `invalid_output` naming the
 * first bad block and what is wrong with it.
 */
function readBlocks(name: string, given: unknown[]): Step<{ blocks: ContentBlock[] }> {
  const blocks: ContentBlock[] = [];
  for (const [index, value] of given.entries()) {
    const block = readBlock(value);
    if (typeof block === 'string') {
      return {
        ok: false,
        code: 'invalid_output',
        content: `Tool "${name}" returned an invalid content block at index ${index}: ${block}.`,
      };
    }
    blocks.push(block);
  }
  return { ok: true, blocks };
}

/**
 * One block, copied, or what is wrong with it. Its texts are made well-formed (a lone surrogate, as
 * from `slice` cutting an emoji in two, becomes U+FFFD): a strict JSON reader, an MCP client's or a
 * model API's, refuses a whole message that holds one.
 */
function readBlock(value: unknown): ContentBlock | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'a block must be an object';
  const b = value as Record<string, unknown>;
  const type = b.type;
  switch (type) {
    case 'text':
      return typeof b.text === 'string' ? { type, text: b.text.toWellFormed() } : 'a text block needs `text`, a string';
    case 'image':
    case 'audio': {
      if (typeof b.mimeType !== 'string' || b.mimeType === '')
        return `an ${type} block needs \`mimeType\` (e.g. "${type === 'image' ? 'image/png' : 'audio/wav'}")`;
      const bad = base64Problem(b.data, 'data');
      return bad ?? { type, data: b.data as string, mimeType: b.mimeType.toWellFormed() };
    }
    case 'resource_link': {
      if (typeof b.uri !== 'string' || b.uri === '') return 'a resource_link block needs `uri`, a string';
      if (typeof b.name !== 'string') return 'a resource_link block needs `name`, a string';
      const link: ContentBlock = { type, uri: b.uri.toWellFormed(), name: b.name.toWellFormed() };
      for (const key of ['mimeType', 'description'] as const) {
        if (b[key] === undefined) continue;
        if (typeof b[key] !== 'string') return `a resource_link block's \`${key}\` must be a string`;
        link[key] = b[key].toWellFormed();
      }
      return link;
    }
    case 'resource': {
      const r = b.resource;
      if (r === null || typeof r !== 'object' || Array.isArray(r))
        return 'a resource block needs `resource`, an object { uri, mimeType?, text? | blob? }';
      const { uri, mimeType, text, blob } = r as Record<string, unknown>;
      if (typeof uri !== 'string' || uri === '') return 'a resource block needs `resource.uri`, a string';
      if (mimeType !== undefined && typeof mimeType !== 'string')
        return "a resource block's `resource.mimeType` must be a string";
      if ((text === undefined) === (blob === undefined))
        return 'a resource block needs one of `resource.text` (a string) or `resource.blob` (base64)';
      if (text !== undefined && typeof text !== 'string') return "a resource block's `resource.text` must be a string";
      const bad = blob === undefined ? undefined : base64Problem(blob, 'resource.blob');
      if (bad) return bad;
      return {
        type,
        resource: {
          uri: uri.toWellFormed(),
          ...(mimeType === undefined ? {} : { mimeType: mimeType.toWellFormed() }),
          ...(typeof text === 'string' ? { text: text.toWellFormed() } : { blob: blob as string }),
        },
      };
    }
    default:
      return `unknown type ${JSON.stringify(type) ?? 'undefined'} (one of text, image, audio, resource_link, resource)`;
  }
}

function base64Problem(data: unknown, field: string): string | undefined {
  if (typeof data !== 'string') return `\`${field}\` must be a base64 string`;
  if (data.length % 4 !== 0 || !BASE64.test(data)) return `\`${field}\` is not base64 (A-Z, a-z, 0-9, +, /, = padding)`;
  return undefined;
}

/** The base64 payload of a binary block (image, audio, an embedded blob); none for text. */
function payloadOf(block: ContentBlock): string | undefined {
  if (BINARY.has(block.type)) return (block as { data: string }).data;
  return block.type === 'resource' ? block.resource.blob : undefined;
}

/**
 * The cap, per block. What cannot be cut counts first, whole: each binary block's bytes, and the
 * line that names each non-text block in `content` (a link's URI may be long; a thousand empty
 * images are a thousand lines). A block that does not fit fails the call. The text blocks (and
 * embedded text resources) share what is left, as one text would: head and tail kept, a marker
 * where the middle was cut.
 */
function capBlocks(
  name: string,
  blocks: ContentBlock[],
  cap: number,
): Step<{ blocks: ContentBlock[]; truncated: boolean }> {
  let fixed = 0;
  for (const [index, block] of blocks.entries()) {
    if (block.type === 'text') continue;
    const payload = payloadOf(block);
    const named = namedBytes(block);
    const size = payload === undefined ? named : decodedSize(payload);
    const before = fixed;
    fixed += payload === undefined ? named : size + named;
    if (fixed <= cap) continue;
    const mime = block.type === 'resource' ? block.resource.mimeType : block.mimeType;
    const what =
      payload !== undefined ? 'A binary block' : block.type === 'resource' ? "A resource's URI" : 'A resource link';
    return {
      ok: false,
      code: 'output_too_large',
      content: `Tool "${name}" returned ${block.type} block ${index}${mime ? ` (${mime.slice(0, 100)})` : ''} of ${size} bytes, which does not fit in the plugin's output cap of ${cap} bytes${before ? ` beside ${before} bytes of blocks before it that cannot be cut either` : ''}. ${what} cannot be cut: ask for a smaller one, or raise the plugin's \`maxOutputBytes\` in the config.`,
    };
  }
  // `content` joins the blocks with line breaks: an empty text block costs one, and a flood of them
  // would otherwise pass the cap whole.
  const breaks = Math.max(blocks.length - 1, 0);
  if (fixed + breaks > cap)
    return {
      ok: false,
      code: 'output_too_large',
      content: `Tool "${name}" returned ${blocks.length} content blocks: the line breaks between them alone are ${breaks} bytes${fixed ? `, beside ${fixed} bytes of blocks that cannot be cut` : ''}, over the plugin's output cap of ${cap} bytes. Return fewer blocks (join short texts into one), or raise the plugin's \`maxOutputBytes\` in the config.`,
    };
  const texts = capTexts(
    blocks.map((b) => (b.type === 'text' ? b.text : b.type === 'resource' ? b.resource.text : undefined)),
    cap - fixed - breaks,
  );
  if (!texts.truncated) return { ok: true, blocks, truncated: false };
  const out: ContentBlock[] = [];
  for (const [i, block] of blocks.entries()) {
    const text = texts.texts[i];
    if (text === null) continue; // a text block wholly in the cut middle
    if (text === undefined) out.push(block);
    else if (block.type === 'text') out.push({ type: 'text', text });
    else if (block.type === 'resource') out.push({ type: 'resource', resource: { ...block.resource, text } });
  }
  return { ok: true, blocks: out, truncated: true };
}

/**
 * Caps several texts as one: the first `maxBytes / 2` bytes and the last `maxBytes / 2` are kept,
 * the texts between dropped (`null`), the two where the cut falls shortened, and the marker put
 * where the head ends. `undefined` entries (not text) stay as they are.
 */
export function capTexts(
  texts: readonly (string | undefined)[],
  maxBytes: number,
): { texts: (string | undefined | null)[]; truncated: boolean } {
  const sizes = texts.map((t) => (t === undefined ? 0 : Buffer.byteLength(t)));
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total <= maxBytes) return { texts: [...texts], truncated: false };
  const half = Math.floor(maxBytes / 2);
  const out: (string | undefined | null)[] = texts.map((t) => (t === undefined ? undefined : null));
  // The head: whole texts while they fit, then the head of the one the cut falls in.
  let head = 0;
  let h = 0;
  for (; h < texts.length && head + sizes[h]! <= half; h++) {
    out[h] = texts[h];
    head += sizes[h]!;
  }
  let tail = 0;
  let t = texts.length - 1;
  for (; t > h && tail + sizes[t]! <= half; t--) {
    out[t] = texts[t];
    tail += sizes[t]!;
  }
  // Where the cut falls: in one text (both ends of the cut in it), or from the head of text h to the tail of text t.
  const first = Buffer.from(texts[h]!, 'utf8');
  const last = h === t ? first : Buffer.from(texts[t]!, 'utf8');
  const headPart = first.subarray(0, backToBoundary(first, half - head)).toString('utf8');
  const tailBytes = last.subarray(forwardToBoundary(last, last.length - (half - tail)));
  const omitted = total - head - Buffer.byteLength(headPart) - tailBytes.length - tail;
  const marker = `\n\n[… ${omitted} bytes omitted of ${total}: output capped at ${maxBytes} bytes, head and tail kept …]\n\n`;
  const tailPart = tailBytes.toString('utf8');
  if (h === t) {
    out[h] = headPart + marker + tailPart;
  } else {
    out[h] = headPart + marker;
    out[t] = tailPart === '' ? null : tailPart;
  }
  return { texts: out, truncated: true };
}

/**
 * The bytes of a non-text block that the cap cannot cut: its line in `content` (for an embedded
 * text, the line above the text) and the fields served beside it, a link's description included.
 */
function namedBytes(block: Exclude<ContentBlock, { type: 'text' }>): number {
  if (block.type === 'resource' && block.resource.text !== undefined)
    return Buffer.byteLength(blockText({ type: 'resource', resource: { ...block.resource, text: '' } }));
  const description = block.type === 'resource_link' ? (block.description ?? '') : '';
  return Buffer.byteLength(blockText(block)) + Buffer.byteLength(description);
}
