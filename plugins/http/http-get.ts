/** `http_get`: fetch one https URL through the SSRF guard and return status, a few headers and the body. */
import type { LookupFunction } from 'node:net';
import Type from 'typebox';
import { defineTool } from 'rousseau-host';
import { HttpToolError } from './errors.ts';
import type { Fetched } from './fetch.ts';
import { limitsOf } from './options.ts';
import { MAX_REDIRECTS, parseTarget } from './url.ts';

const SHOWN_HEADERS = [
  'content-type',
  'content-length',
  'content-encoding',
  'last-modified',
  'etag',
  'location',
  'retry-after',
];

/**
 * got and ipaddr.js cost ~200 ms to import: loaded at the first call, so listing tools or starting
 * a host that never fetches does not pay for them.
 */
let network: Promise<[typeof import('./fetch.ts'), typeof import('./guarded-agent.ts')]> | undefined;
const loadNetwork = () => (network ??= Promise.all([import('./fetch.ts'), import('./guarded-agent.ts')]));

export interface HttpGetDeps {
  /** Resolves hostnames; tests inject answers here (never the real network). Default `dns.lookup`. */
  lookup?: LookupFunction;
}

export function createHttpGetTool(deps: HttpGetDeps = {}) {
  return defineTool({
    name: 'http_get',
    description: [
      'Fetch one https:// URL with GET and return the response.',
      'Input: url (absolute, https only; no user:password@).',
      'Output: "HTTP <status> <reason>", the final URL when redirected, a few headers (content-type, content-length, last-modified, location…), a blank line, then the body as text.',
      'A non-text body is described, not shown. HTTP error statuses are returned as responses, not failures.',
      `Limits: at most ${MAX_REDIRECTS} redirects, each to https and each allowed by the host's policy as a call with that URL would be; the body is cut at 1 MiB after decompression, with a marker; timeouts of 10 s to connect, 15 s to first byte, 30 s in all.`,
      'Only public addresses are reached: loopback, private, link-local, CGNAT, multicast, unspecified (0.0.0.0), cloud metadata and other special ranges are refused,',
      'checked on the address actually connected, for every DNS answer and every redirect hop.',
    ].join(' '),
    inputSchema: Type.Object(
      { url: Type.String({ minLength: 1, maxLength: 8192, description: 'The https:// URL to fetch.' }) },
      { additionalProperties: false },
    ),
    annotations: { title: 'Fetch a web page', readOnly: true, destructive: false, idempotent: true, openWorld: true },
    async execute(input, ctx) {
      const limits = limitsOf(ctx.options);
      const target = parseTarget(input.url);
      const [{ fetchCapped }, { GuardedAgent }] = await loadNetwork();
      const agent = new GuardedAgent({
        ...(deps.lookup ? { lookup: deps.lookup } : {}),
        allowForTests: limits.dangerouslyAllowForTests?.addresses ?? [],
      });
      // A redirect is a call the model did not make: the policy judges it as one, with the hop's URL.
      const checkRedirect = async (next: URL, hop: number) => {
        const verdict = await ctx.authorize({ ...input, url: next.href });
        if (!verdict.allowed)
          throw new HttpToolError(
            'redirect_denied',
            `redirect ${hop} to ${next.href} was not followed: ${verdict.message}`,
          );
      };
      try {
        const fetched = await fetchCapped(target, agent, limits, ctx.signal, checkRedirect);
        return {
          content: render(fetched, limits.maxBodyBytes),
          data: {
            status: fetched.status,
            url: fetched.url,
            redirects: fetched.redirects,
            bytes: fetched.body.length,
            truncated: fetched.truncated,
          },
        };
      } finally {
        agent.destroy();
      }
    },
  });
}

function render(f: Fetched, maxBodyBytes: number): string {
  const lines = [`HTTP ${f.status}${f.statusText ? ` ${f.statusText}` : ''}`];
  const hops = f.redirects.length;
  if (hops > 0) lines.push(`url: ${f.url} (after ${hops} redirect${hops === 1 ? '' : 's'})`);
  for (const name of SHOWN_HEADERS) {
    const value = f.headers[name];
    if (value !== undefined) lines.push(`${name}: ${Array.isArray(value) ? value.join(', ') : value}`);
  }
  lines.push('', bodyText(f));
  if (f.truncated) lines.push(`[… body cut at ${maxBodyBytes} bytes (decompressed)]`);
  return lines.join('\n');
}

/** The body as text when it is text (by content type, or by decoding cleanly); otherwise a description. */
function bodyText(f: Fetched): string {
  if (f.body.length === 0) return '(empty body)';
  const type = String(f.headers['content-type'] ?? '');
  const charset = /charset="?([\w-]+)/i.exec(type)?.[1] ?? 'utf-8';
  const textual = type === '' || /^text\/|json|xml|javascript|ecmascript|x-www-form-urlencoded|yaml|csv/i.test(type);
  if (textual && !f.body.subarray(0, 8192).includes(0)) {
    try {
      return new TextDecoder(charset, { fatal: !f.truncated }).decode(f.body);
    } catch {
      // not text after all
    }
  }
  return `(binary body: ${f.body.length} bytes of ${type || 'unknown type'}, not shown)`;
}
