/**
 * api_get: a tool built from the plugin's validated options (see `setup` in index.ts). It reads one
 * HTTP API, the one the user configured, and nothing else: the model chooses a path, never a host.
 */
import Type from 'typebox';
import { defineTool } from 'rousseau-host';

export interface ApiSettings {
  /** Absolute http(s) URL; paths from the model are appended to it. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …`; never logged, never returned. */
  token?: string;
  /** Most bytes of a response body returned to the model. */
  maxBytes: number;
}

export function apiGet(settings: ApiSettings) {
  const base = new URL(settings.baseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  return defineTool({
    name: 'api_get',
    description:
      `GET a path of the API at ${base.origin}${prefix} and return "HTTP <status> <reason>" on the first line, then the response body ` +
      `(at most ${settings.maxBytes} bytes; a final "[truncated …]" line says when it was cut). Input: path. ` +
      'Redirects are not followed (the status and the Location are returned). A status of 400 or more is reported as an error.',
    inputSchema: Type.Object(
      {
        path: Type.String({
          description: `Path and query string under ${base.origin}${prefix}, starting with "/", e.g. "/items/42?fields=name".`,
          // One leading slash only: "//other.example" would be a different host. No lookahead: the
          // host refuses patterns its linear regex engine cannot run.
          pattern: '^/(?:[^/\\s]\\S*)?$',
          maxLength: 2048,
        }),
      },
      { additionalProperties: false },
    ),
    annotations: { title: 'API GET', readOnly: true, openWorld: true },
    async execute({ path }, ctx) {
      const url = new URL(prefix + path, base.origin);
      // The pattern already forbids it; check again where it matters, so a later schema edit cannot open a hole.
      if (url.origin !== base.origin) throw new Error(`api_get: path "${path}" leaves ${base.origin}`);

      // The signal aborts the request, and the body read below, on timeout and cancellation.
      const response = await fetch(url, {
        signal: ctx.signal,
        redirect: 'manual',
        headers: {
          accept: 'application/json, text/plain;q=0.9, */*;q=0.5',
          ...(settings.token ? { authorization: `Bearer ${settings.token}` } : {}),
        },
      });
      const { text, truncated } = await readCapped(response, settings.maxBytes);
      const location = response.headers.get('location');
      const lines = [
        `HTTP ${response.status} ${response.statusText}`.trimEnd(),
        ...(location ? [`Location: ${location}`] : []),
        text,
        ...(truncated ? [`[truncated: first ${settings.maxBytes} bytes of the body shown]`] : []),
      ];
      return { content: lines.join('\n'), isError: response.status >= 400 };
    },
  });
}

/** Reads at most `maxBytes` of the body, then cancels the rest: a huge response never sits in memory. */
async function readCapped(response: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: '', truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  // A cut may split a multi-byte character: the decoder replaces the fragment instead of throwing.
  return { text: new TextDecoder().decode(Buffer.concat(chunks)), truncated };
}
