/**
 * What http_get accepts as a URL, decided on the *parsed* URL (WHATWG), never on the string: the
 * parser has already turned `2852039166`, `0xA9FEA9FE`, `0251.0376.0251.0376`, `127.1` and fullwidth
 * digits into dotted IPv4, and `good@evil` into host `evil`. The address itself is judged at connect
 * time (guarded-agent.ts); here only the scheme and credentials.
 */
import { HttpToolError } from './errors.ts';

export const MAX_REDIRECTS = 10;

export function parseTarget(input: string): URL {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new HttpToolError(
      'invalid_url',
      `"${input}" is not an absolute URL; give one such as https://example.com/page`,
    );
  }
  assertAllowed(url);
  return url;
}

/** The checks every URL passes, the first and each redirect target. */
export function assertAllowed(url: URL): void {
  if (url.protocol !== 'https:') {
    throw new HttpToolError(
      'scheme_not_allowed',
      `${url.protocol.replace(/:$/, '')} URLs are not allowed: http_get fetches https:// URLs only (${url.href})`,
    );
  }
  if (url.username || url.password) {
    throw new HttpToolError(
      'credentials_in_url',
      `URLs with credentials (user@host) are not fetched: http_get sends no credentials`,
    );
  }
}
