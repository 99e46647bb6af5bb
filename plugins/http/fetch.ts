/**
 * One GET with got, inside the limits: the guarded agent for every connection, the scheme and the
 * caller's own check (the host's policy) on every redirect hop (at most 10), no retries, no proxy, no cookies, timeouts on each phase and on
 * the whole call, and a cap on *decoded* bytes. got decompresses and drops Content-Length as it
 * does, so only counting what comes out of the stream stops a gzip bomb.
 */
import got, { type Response } from 'got';
import type { IncomingHttpHeaders } from 'node:http';
import { HttpToolError } from './errors.ts';
import type { GuardedAgent } from './guarded-agent.ts';
import type { HttpOptions } from './options.ts';
import { assertAllowed, MAX_REDIRECTS } from './url.ts';

export interface Fetched {
  status: number;
  statusText: string;
  url: string;
  /** Each URL a redirect led to, in order (the last is `url`). */
  redirects: string[];
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The body went on past the cap; `body` holds its first `maxBodyBytes` bytes. */
  truncated: boolean;
}

/** Called before each redirect is followed, with its target and its number (from 1); throws to refuse it. */
export type RedirectCheck = (target: URL, hop: number) => Promise<void>;

export function fetchCapped(
  url: URL,
  agent: GuardedAgent,
  limits: HttpOptions,
  signal: AbortSignal,
  checkRedirect: RedirectCheck,
): Promise<Fetched> {
  let hops = 0;
  const stream = got.stream(url, {
    agent: { https: agent },
    http2: false,
    https: limits.dangerouslyAllowForTests?.ca ? { certificateAuthority: limits.dangerouslyAllowForTests.ca } : {},
    followRedirect: true,
    maxRedirects: MAX_REDIRECTS,
    retry: { limit: 0 },
    throwHttpErrors: false,
    decompress: true,
    headers: {
      'user-agent': 'rousseau-host http_get',
      accept: 'text/*, application/json, application/xml;q=0.9, */*;q=0.5',
    },
    timeout: {
      lookup: limits.connectTimeoutMs,
      connect: limits.connectTimeoutMs,
      secureConnect: limits.connectTimeoutMs,
      response: limits.responseTimeoutMs,
      socket: limits.responseTimeoutMs,
      request: limits.totalTimeoutMs,
    },
    hooks: {
      beforeRedirect: [
        async (options) => {
          assertAllowed(options.url as URL);
          await checkRedirect(options.url as URL, ++hops);
        },
      ],
    },
  });

  return new Promise<Fetched>((resolve, reject) => {
    let response: Response | undefined;
    const chunks: Buffer[] = [];
    let bytes = 0;
    let truncated = false;
    let settled = false;
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (error !== undefined || !response) return reject(error ?? new HttpToolError('request_failed', 'no response'));
      resolve({
        status: response.statusCode,
        statusText: response.statusMessage ?? '',
        url: response.url,
        redirects: response.redirectUrls.map((u) => u.href),
        headers: response.headers,
        body: Buffer.concat(chunks),
        truncated,
      });
    };
    const onAbort = () => {
      stream.destroy();
      settle(signal.reason ?? new HttpToolError('request_failed', 'aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) return onAbort();

    stream.on('response', (r: Response) => (response = r));
    stream.on('data', (chunk: Buffer) => {
      const room = limits.maxBodyBytes - bytes;
      if (chunk.length <= room) {
        chunks.push(chunk);
        bytes += chunk.length;
        return;
      }
      chunks.push(chunk.subarray(0, room));
      bytes += room;
      truncated = true;
      stream.destroy(); // stops the download and the decompression at the cap
      settle();
    });
    stream.on('end', () => settle());
    stream.on('error', (error: Error & { code?: string }) => settle(describeError(error, limits)));
  });
}

function describeError(error: Error & { code?: string; name: string }, limits: HttpOptions): Error {
  if (
    error.code === 'blocked_address' ||
    error.code === 'scheme_not_allowed' ||
    error.code === 'credentials_in_url' ||
    error.code === 'redirect_denied'
  ) {
    return new HttpToolError(
      error.code,
      (error.cause as Error | undefined)?.message.replace(/ \[\w+\]$/, '') ?? error.message,
    );
  }
  if (error.name === 'MaxRedirectsError')
    return new HttpToolError('too_many_redirects', `more than ${MAX_REDIRECTS} redirects`);
  if (error.name === 'TimeoutError') {
    const phase = (error as { event?: string }).event ?? 'request';
    const ms =
      phase === 'request'
        ? limits.totalTimeoutMs
        : phase === 'response' || phase === 'socket'
          ? limits.responseTimeoutMs
          : limits.connectTimeoutMs;
    return new HttpToolError('timeout', `timed out (${phase} phase, ${ms} ms)`);
  }
  return new HttpToolError('request_failed', `${error.message}${error.code ? ` (${error.code})` : ''}`);
}
