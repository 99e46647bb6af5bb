/**
 * The one bound on JSON text that comes from outside the host, asked before the text is parsed:
 * `JSON.parse` cannot be stopped once it runs, and the check bounds (check-budget.ts) only apply to
 * what it made. 6.9 MB of JSON (1,000,000 small numbers) took 0.6 s to parse on the host's thread.
 *
 * Every place the host parses such text asks here: a call's input given as text (`host.call(name,
 * text)`, the CLI's `call` and `policy check`, stdin included), `--options`, config files and
 * package manifests, the replay script, the REPL's session files, MCP's stdio lines, the answers of
 * an MCP server plugin over HTTP and of an OAuth issuer. Where an answer is a stream, it is read no
 * further than the bound. Model providers' answers and events have their own, larger bound
 * (providers/http.ts: a long answer is a model's to give); `--mcp-http` bodies the MCP SDK's 4 MiB.
 */
import { readFileSync, statSync } from 'node:fs';
import { thousands } from './thousands.ts';

/**
 * 10 MiB, MCP's stdio line limit: ~0.9 s of parsing at its worst (many small values) on this
 * machine, and more than any tool input or config a person writes. A call's input may be allowed
 * more (`limits.maxInputChars`, README.md); the others are files and answers of a known shape.
 */
export const MAX_JSON_TEXT_CHARS = 10 * 1024 * 1024;

/** Why `length` characters (or bytes) of JSON text are too many to parse, or undefined. */
export function jsonTextTooLong(length: number, limit = MAX_JSON_TEXT_CHARS): string | undefined {
  if (length <= limit) return undefined;
  return `${thousands(length)} characters of JSON, over the host's limit of ${thousands(limit)} parsed at once`;
}

/** A JSON file's parsed text; a file over MAX_JSON_TEXT_CHARS bytes is refused before it is read. */
export function readJsonFile(file: string): unknown {
  const tooLong = jsonTextTooLong(statSync(file).size);
  if (tooLong) throw new Error(`${file} holds ${tooLong}`);
  return JSON.parse(readFileSync(file, 'utf8'));
}

/**
 * A stream's text, read no further than `limit` characters: past it, throws an Error naming the
 * bound (`what` is what the text is, for the message).
 */
export async function readTextWithin(
  stream: AsyncIterable<Uint8Array | string>,
  what: string,
  limit = MAX_JSON_TEXT_CHARS,
): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of stream) {
    text += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    if (text.length > limit)
      throw new Error(`${what} passed the host's limit of ${thousands(limit)} characters of JSON parsed at once`);
  }
  return text + decoder.decode();
}
