/** The http plugin's options and their defaults. */
import Type, { type Static } from 'typebox';
import Value from 'typebox/value';

export const HttpOptions = Type.Object(
  {
    maxBodyBytes: Type.Integer({
      minimum: 1024,
      maximum: 16 * 1024 * 1024,
      default: 1024 * 1024,
      description: 'Most decoded (decompressed) body bytes read.',
    }),
    connectTimeoutMs: Type.Integer({
      minimum: 1,
      default: 10_000,
      description: 'DNS lookup, TCP connect and TLS handshake, each.',
    }),
    responseTimeoutMs: Type.Integer({
      minimum: 1,
      default: 15_000,
      description: 'From request sent to response headers, and the longest silence while reading the body.',
    }),
    totalTimeoutMs: Type.Integer({ minimum: 1, default: 30_000, description: 'The whole call, redirects included.' }),
    dangerouslyAllowForTests: Type.Optional(
      Type.Object(
        {
          addresses: Type.Array(Type.String(), {
            description: 'Exact IP addresses of a local test server to let through the SSRF guard.',
          }),
          ca: Type.Optional(Type.String({ description: "PEM of the test server's self-signed certificate." })),
        },
        {
          additionalProperties: false,
          description:
            'For the test suite only: lets http_get reach a local TLS server. Never set this in a real config.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export type HttpOptions = Static<typeof HttpOptions>;

/** The options with the schema's defaults filled in; `options` itself is left as it was. */
export function limitsOf(options: Partial<HttpOptions> | undefined): HttpOptions {
  return Value.Default(HttpOptions, structuredClone(options ?? {})) as HttpOptions;
}
