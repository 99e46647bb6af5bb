/**
 * The one way providers talk HTTP: a JSON POST answered by a server-sent-event stream (or, asked
 * for, by one JSON body), with got.
 *
 * Retries (429, 5xx, 529 "overloaded", refused or reset connections, timeouts) happen only before
 * the first byte of a 2xx body: once text has streamed to the user, a retry would repeat it, so a
 * stream cut off later is the provider's `stream_incomplete` error. `retry-after-ms` and
 * `retry-after` (seconds or an HTTP date) are honoured; a wait longer than `maxRetryAfterMs` is not
 * worth holding a turn for and fails at once. Headers (the API key) never reach a log or a message.
 */
import { createParser, type ParseError } from 'eventsource-parser';
import type { Got, Request, RequestError } from 'got';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../log.ts';
import { type ModelPricing, ProviderError } from '../messages.ts';
import { pricingOf } from '../pricing.ts';
import { messageOf } from '../../errors.ts';

export interface HttpSettings {
  /** No response headers, or no byte of a stream, for this long: the attempt fails (and is retried). */
  timeoutMs: number;
  /** Retries after the first attempt. */
  retries: number;
  /** First backoff delay; doubles per retry, with jitter. */
  backoffMs?: number;
  maxRetryAfterMs?: number;
  log?: Logger;
}

const HTTP_DEFAULTS = { timeoutMs: 120_000, retries: 3, backoffMs: 500, maxRetryAfterMs: 60_000 };

/** What every provider is given; each says its own defaults for the key and the base URL. */
export interface ProviderOptions {
  apiKey?: string;
  baseUrl?: string;
  model?: string;
  maxTokens?: number;
  timeoutMs?: number;
  retries?: number;
  /** First retry delay (tests shorten it). */
  backoffMs?: number;
  log?: Logger;
  /** The model's price; default: `prices`, then the built-in table (pricing.ts), by model id. */
  pricing?: ModelPricing;
  /** Model prices by model id (the config's top-level `pricing`), looked up before the built-in table. */
  prices?: Readonly<Record<string, ModelPricing>>;
}

/** The price a provider reports for its model: given, or looked up; omitted when unknown. */
export function pricingFor(model: string, options: ProviderOptions): { pricing?: ModelPricing } {
  const pricing = options.pricing ?? pricingOf(model, options.prices);
  return pricing ? { pricing } : {};
}

/** A provider's HTTP settings: its options, with the defaults filled in. */
export function httpSettingsOf(options: ProviderOptions): HttpSettings {
  return {
    timeoutMs: options.timeoutMs ?? HTTP_DEFAULTS.timeoutMs,
    retries: options.retries ?? HTTP_DEFAULTS.retries,
    ...(options.backoffMs !== undefined ? { backoffMs: options.backoffMs } : {}),
    ...(options.log ? { log: options.log } : {}),
  };
}

export interface SseEvent {
  event: string;
  data: string;
}

// got costs ~180 ms to import: it loads at the first request, so importing the host or listing
// its tools never pays for it.
let loadingGot: Promise<Got> | undefined;
const loadGot = (): Promise<Got> => (loadingGot ??= import('got').then((m) => m.default));

const RETRY_STATUS = new Set([408, 409, 429, 500, 502, 503, 504, 529]);
const RETRY_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENETUNREACH',
  'ECONNABORTED',
]);

/**
 * POSTs `body` and returns the response's event stream. `who` names the API in messages
 * ("Anthropic API"). Rejects with `ProviderError` after the retries.
 */
export async function postForEvents(
  who: string,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  settings: HttpSettings,
  signal?: AbortSignal,
): Promise<AsyncGenerator<SseEvent>> {
  const stream = await post(who, url, 'text/event-stream', headers, body, settings, signal);
  // A server that ignores `stream: true` answers one JSON body: read as events, it is no event at
  // all, and the turn would end as a stream without its end, which names nothing wrong.
  if (/^application\/json\b/i.test(String(stream.response?.headers['content-type'] ?? ''))) {
    // Redacted before the cut to 500, which could leave a key's head
    const text = redact(await readText(stream, MAX_QUOTED_BODY).catch(() => ''), headers).slice(0, 500);
    stream.destroy();
    throw new ProviderError(
      'bad_response',
      `${who} answered with one JSON body, not a stream: it must answer a request with "stream": true in server-sent events (text/event-stream). It sent: ${text.trim() || '(empty body)'}`,
    );
  }
  return readEvents(who, stream, signal);
}

/**
 * POSTs `body` and returns the response's JSON body. A body that breaks off is `stream_incomplete`,
 * one that is not JSON (or passes 16 MiB) `bad_response`. Rejects with `ProviderError` after the retries.
 */
export async function postForJson(
  who: string,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  settings: HttpSettings,
  signal?: AbortSignal,
): Promise<unknown> {
  const stream = await post(who, url, 'application/json', headers, body, settings, signal);
  let text: string;
  try {
    text = await readText(stream, MAX_EVENT_BYTES + 1);
  } catch (error) {
    throw brokenOff(who, 'answer', error, signal);
  } finally {
    stream.destroy();
  }
  if (text.length > MAX_EVENT_BYTES)
    throw new ProviderError('bad_response', `${who} sent an answer larger than ${MAX_EVENT_BYTES} bytes`);
  try {
    return JSON.parse(text);
  } catch {
    // Redacted whole before the cut, which could leave a key's head
    throw new ProviderError(
      'bad_response',
      `${who} sent an answer that is not JSON: ${redact(text, headers).slice(0, 200)}`,
    );
  }
}

/** The response body of the first attempt answered below 400, after the retries the others earn. */
async function post(
  who: string,
  url: string,
  accept: string,
  headers: Record<string, string>,
  body: unknown,
  settings: HttpSettings,
  signal: AbortSignal | undefined,
): Promise<Request> {
  const backoffMs = settings.backoffMs ?? HTTP_DEFAULTS.backoffMs;
  const maxRetryAfterMs = settings.maxRetryAfterMs ?? HTTP_DEFAULTS.maxRetryAfterMs;
  const got = await loadGot();
  for (let attempt = 0; ; attempt++) {
    throwIfAborted(who, signal);
    const stream = got.stream.post(url, {
      json: body,
      headers: { accept, ...headers },
      timeout: {
        connect: Math.min(settings.timeoutMs, 15_000),
        response: settings.timeoutMs,
        socket: settings.timeoutMs,
      },
      retry: { limit: 0 },
      throwHttpErrors: false,
      ...(signal ? { signal } : {}),
    });
    let failed: { error: ProviderError; retry: boolean; waitMs?: number };
    try {
      const response = await responseOf(stream);
      if (response.statusCode < 400) return stream;
      const status = response.statusCode;
      const text = redact(await readText(stream, MAX_QUOTED_BODY).catch(() => ''), headers);
      const said = apiMessageOf(text);
      // A 404 names the URL asked. Without a message of the API's own ("404 page not found"), it
      // is most often a base URL that stops short of the API's path (an OpenAI-compatible server's
      // `/v1`); with one ("model … not found"), the API has said why.
      const notFound =
        status === 404
          ? ` to POST ${withoutCredentials(url)}${said === undefined ? ' (no such endpoint: check the base URL)' : ''}`
          : '';
      const error = new ProviderError(
        status === 429 ? 'rate_limited' : 'http_error',
        `${who} answered ${status}${notFound}: ${said ?? (text.trim().slice(0, 500) || '(empty body)')}`,
        { status },
      );
      const asked = retryAfterMs(response.headers);
      failed =
        asked !== undefined && asked > maxRetryAfterMs
          ? {
              error: new ProviderError(
                error.code,
                `${error.message} (it asks to retry after ${Math.ceil(asked / 1000)} s)`,
                { status },
              ),
              retry: false,
            }
          : { error, retry: RETRY_STATUS.has(status), ...(asked !== undefined ? { waitMs: asked } : {}) };
    } catch (error) {
      throwIfAborted(who, signal);
      const timedOut = (error as Error).name === 'TimeoutError';
      failed = {
        error: new ProviderError(
          timedOut ? 'timeout' : 'connection',
          `${who} could not be reached at ${new URL(url).origin}: ${messageOf(error)}`,
          { cause: error },
        ),
        retry: timedOut || RETRY_CODES.has((error as RequestError).code ?? ''),
      };
    }
    stream.destroy();
    if (!failed.retry || attempt >= settings.retries) throw failed.error;
    const waitMs = failed.waitMs ?? Math.min(backoffMs * 2 ** attempt, 8_000) * (0.8 + Math.random() * 0.4);
    settings.log?.warn(
      `${failed.error.message}; retrying in ${Math.round(waitMs)} ms (retry ${attempt + 1} of ${settings.retries})`,
    );
    try {
      await sleep(waitMs, undefined, signal ? { signal } : {});
    } catch {
      throwIfAborted(who, signal);
    }
  }
}

/** Why a response body (`what`: its stream or its answer) stopped coming: cancelled, silent too long, or cut off. */
function brokenOff(who: string, what: string, error: unknown, signal: AbortSignal | undefined): ProviderError {
  throwIfAborted(who, signal);
  const timedOut = (error as Error).name === 'TimeoutError';
  return new ProviderError(
    timedOut ? 'timeout' : 'stream_incomplete',
    `${who}'s ${what} broke off: ${messageOf(error)}`,
    { cause: error },
  );
}

function throwIfAborted(who: string, signal: AbortSignal | undefined): void {
  if (signal?.aborted)
    throw new ProviderError('aborted', `The request to ${who} was cancelled`, { cause: signal.reason });
}

function responseOf(
  stream: Request,
): Promise<{ statusCode: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    stream.once('response', resolve);
    stream.once('error', reject);
  });
}

async function readText(stream: Readable, cap: number): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of stream) {
    text += decoder.decode(chunk as Uint8Array, { stream: true });
    if (text.length > cap) break;
  }
  return (text + decoder.decode()).slice(0, cap);
}

/** Header names whose values are credentials (the API key: `x-api-key`, `authorization`, `api-key`). */
const SECRET_HEADER = /auth|key|token|secret/i;
/** Shorter values are left: replacing them would blank common words, and no key is so short. */
const MIN_SECRET_CHARS = 8;

/**
 * A server's text with the request's credentials replaced by `[redacted]`: some servers echo the key
 * they refused ("Incorrect API key provided: sk-…"), and the text goes into the error (the terminal,
 * `--json`, a log line at each retry).
 */
function redact(text: string, headers: Record<string, string>): string {
  let redacted = text;
  for (const [name, value] of Object.entries(headers)) {
    if (!SECRET_HEADER.test(name)) continue;
    // The whole value, then its credential alone (after a scheme: `Bearer sk-…`)
    for (const secret of [value, value.slice(value.indexOf(' ') + 1)])
      if (secret.length >= MIN_SECRET_CHARS) redacted = redacted.replaceAll(secret, '[redacted]');
  }
  return redacted;
}

/** A URL as messages show it: without a user and password a base URL may carry (`https://user:key@proxy/v1`). */
export function withoutCredentials(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url; // not a URL: the request fails on it, naming it
  }
  if (!parsed.username && !parsed.password) return url;
  parsed.username = '';
  parsed.password = '';
  return parsed.href.replace(/\/$/, url.endsWith('/') ? '/' : '');
}

/** The human part of an API's error body (`{ error: { message } }` for both Anthropic and OpenAI), if it has one. */
function apiMessageOf(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message);
    if (typeof message === 'string') return message;
  } catch {
    // not JSON: the caller shows the text itself
  }
  return undefined;
}

function retryAfterMs(headers: Record<string, string | string[] | undefined>): number | undefined {
  const ms = Number(headers['retry-after-ms']);
  if (headers['retry-after-ms'] !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers['retry-after'];
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * A single event larger than this is a broken stream, not a model's answer: without a cap a server
 * that never ends a line would fill the host's memory.
 */
const MAX_EVENT_BYTES = 16 * 1024 * 1024;
/** How much of a body the host reads to quote from it in an error: a key it echoes is redacted before the cut. */
const MAX_QUOTED_BODY = 64 * 1024;

/** Parses `text/event-stream` with eventsource-parser (CR, LF and CRLF line ends, a BOM, comments, multi-line data). */
async function* readEvents(who: string, stream: Readable, signal: AbortSignal | undefined): AsyncGenerator<SseEvent> {
  // A network chunk may end inside a multi-byte character: decoding chunk by chunk would turn its
  // halves into U+FFFD, in the model's text or a tool's arguments.
  const decoder = new TextDecoder();
  let parsed: SseEvent[] = [];
  let broken: ParseError | undefined;
  const parser = createParser({
    maxBufferSize: MAX_EVENT_BYTES,
    onEvent: ({ event, data }) => parsed.push({ event: event || 'message', data }),
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') broken ??= error;
    },
  });
  const drain = () => {
    if (broken) throw new Error(`an event passed ${MAX_EVENT_BYTES} bytes`);
    const ready = parsed;
    parsed = [];
    return ready;
  };
  try {
    for await (const chunk of stream) {
      parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
      yield* drain();
    }
    parser.feed(decoder.decode());
    // A last event the server did not end with a blank line still counts, as it always has here.
    parser.reset({ consume: true });
    yield* drain();
  } catch (error) {
    throw brokenOff(who, 'stream', error, signal);
  } finally {
    stream.destroy();
  }
}
