/**
 * Who is calling the team server (docs/serve.md): bearer tokens from the config, and an OAuth 2.1
 * resource server that validates JWTs against an issuer's key set, as the MCP authorization spec
 * asks of an HTTP server. The outcome is a `Caller`, or a refusal serve.ts answers with 401 / 403
 * and a `WWW-Authenticate` challenge.
 *
 * A token's value lives here only as its SHA-256 digest; nothing a token holds reaches a log line,
 * an error message, a refusal or the audit trail.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { JWTPayload } from 'jose';
import type { ServeAuthConfig } from '../config-schema.ts';
import { hostError, messageOf } from '../errors.ts';
import type { Caller } from '../types.ts';
import { readTextWithin } from '../json-text.ts';

/** Why a request is not served: 401 (no token, or a bad one) or 403 (a good token without the scope). */
export interface AuthRefusal {
  status: 401 | 403;
  /** The RFC 6750 error code; absent when the request carried no token at all. */
  error?: 'invalid_token' | 'insufficient_scope';
  /** For people: what was wrong with the token (never anything it holds). */
  description?: string;
  /** The scopes a token needs here (space-separated), for a client to ask its issuer for. */
  scope?: string;
}

/** The caller a request proves, or why it proves none; `undefined` is a plain 401. */
export type Authenticate = (
  req: IncomingMessage,
) => Caller | AuthRefusal | undefined | Promise<Caller | AuthRefusal | undefined>;

/** What the server tells OAuth clients about itself (RFC 9728), besides its own URL. */
export interface ProtectedResource {
  authorizationServers: string[];
  scopesSupported?: string[];
}

export interface ServeAuth {
  authenticate: Authenticate;
  /** Set when an OAuth issuer is configured: the server then serves its protected resource metadata. */
  protectedResource?: ProtectedResource;
  /** The auth mode for the startup line: token names and the issuer, never a token. */
  describe: string;
}

export interface ServeAuthOptions {
  /** Where `tokenEnv` is read. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * The least time between two fetches of the issuer's key set; a token signed by a key not in the
   * set fetches it again, at most this often. Default 30 s (jose's).
   */
  jwksCooldownMs?: number;
}

/** How far a token's `exp` and `nbf` may be off the server's clock, in seconds. */
const CLOCK_TOLERANCE_S = 30;

/** How long fetching the issuer's metadata may take at startup. */
const DISCOVERY_TIMEOUT_MS = 10_000;

/** Tells a refusal from a caller. */
export function isAuthRefusal(outcome: Caller | AuthRefusal): outcome is AuthRefusal {
  return 'status' in outcome;
}

const invalidToken = (description: string): AuthRefusal => ({ status: 401, error: 'invalid_token', description });

const digest = (token: string) => createHash('sha256').update(token).digest();

/**
 * The authentication `serve.auth` describes; `undefined` when it describes none. Throws
 * `RH_ERR_SERVE_AUTH` for a token whose variable is unset, and for an issuer whose metadata cannot be read.
 */
export async function createServeAuth(
  config: ServeAuthConfig | undefined,
  options: ServeAuthOptions = {},
): Promise<ServeAuth | undefined> {
  const tokens = tokenDigests(config?.tokens ?? [], options.env ?? process.env);
  const tokenNames = new Set(tokens.map((t) => t.caller.name));
  const oauth = config?.oauth ? await oauthVerifier(config.oauth, options.jwksCooldownMs) : undefined;
  if (!tokens.length && !oauth) return undefined;
  const required = config?.requiredScopes ?? [];
  const scope = required.length ? { scope: required.join(' ') } : {};
  const invalid = (description: string): AuthRefusal => ({ ...invalidToken(description), ...scope });

  const authenticate: Authenticate = async (req) => {
    const header = req.headers.authorization;
    if (header === undefined) return { status: 401, ...scope };
    const match = /^Bearer +(\S+) *$/i.exec(header);
    if (!match) return invalid('expected an Authorization header "Bearer TOKEN"');
    const token = match[1]!;
    let caller = findToken(tokens, token);
    if (!caller && oauth && token.split('.').length === 3) {
      const verified = await oauth.verify(token);
      if (isAuthRefusal(verified)) return { ...verified, ...scope };
      // Policy rules, limits and the audit know a caller by name alone: a subject the issuer lets
      // someone pick must not make them a configured token's caller.
      if (tokenNames.has(verified.name))
        return invalid("the token's subject (sub, or client_id) is the name of a bearer token of this server");
      caller = verified;
    }
    if (!caller) return invalid('the token is not one this server knows');
    const missing = required.filter((s) => !caller.scopes.includes(s));
    if (missing.length)
      return {
        status: 403,
        error: 'insufficient_scope',
        description: `the token lacks the scope ${missing.join(' ')}`,
        ...scope,
      };
    return caller;
  };

  const modes = [
    ...(tokens.length ? [`bearer tokens (${tokens.map((t) => t.caller.name).join(', ')})`] : []),
    ...(oauth ? [`OAuth (issuer ${oauth.issuer}, audience ${oauth.audience})`] : []),
  ];
  return {
    authenticate,
    describe: modes.join(' + '),
    ...(oauth
      ? {
          protectedResource: {
            authorizationServers: [oauth.issuer],
            ...(required.length ? { scopesSupported: [...required] } : {}),
          },
        }
      : {}),
  };
}

interface TokenEntry {
  digest: Buffer;
  caller: Caller;
}

function tokenDigests(entries: NonNullable<ServeAuthConfig['tokens']>, env: NodeJS.ProcessEnv): TokenEntry[] {
  const names = new Set<string>();
  const out: TokenEntry[] = [];
  for (const entry of entries) {
    const where = `token "${entry.name}"`;
    if ((entry.token === undefined) === (entry.tokenEnv === undefined))
      throw hostError('RH_ERR_SERVE_AUTH', [`${where} needs exactly one of token and tokenEnv`]);
    if (names.has(entry.name)) throw hostError('RH_ERR_SERVE_AUTH', [`two tokens are named "${entry.name}"`]);
    names.add(entry.name);
    let value = entry.token;
    if (entry.tokenEnv !== undefined) {
      value = env[entry.tokenEnv];
      if (!value)
        throw hostError('RH_ERR_SERVE_AUTH', [
          `${where} reads its value from the environment variable ${entry.tokenEnv}, which is not set (or empty): set it to the token's value before starting the server (a new one: ${entry.tokenEnv}=$(openssl rand -hex 32))`,
        ]);
      if (value.length < 16)
        throw hostError('RH_ERR_SERVE_AUTH', [
          `${where}: the value of ${entry.tokenEnv} is shorter than 16 characters; use a long random one (openssl rand -hex 32)`,
        ]);
    }
    const d = digest(value!);
    const twin = out.find((t) => timingSafeEqual(t.digest, d));
    if (twin)
      throw hostError('RH_ERR_SERVE_AUTH', [
        `${where} has the same value as token "${twin.caller.name}": each caller needs its own`,
      ]);
    out.push({ digest: d, caller: { name: entry.name, scopes: [...(entry.scopes ?? [])], via: 'token' } });
  }
  return out;
}

/** The caller whose token this is. Every digest is compared, in constant time, whatever matched. */
function findToken(tokens: readonly TokenEntry[], token: string): Caller | undefined {
  const d = digest(token);
  let found: Caller | undefined;
  for (const entry of tokens) if (timingSafeEqual(entry.digest, d) && !found) found = entry.caller;
  return found;
}

interface OAuthVerifier {
  issuer: string;
  audience: string;
  verify(token: string): Promise<Caller | AuthRefusal>;
}

async function oauthVerifier(
  config: NonNullable<ServeAuthConfig['oauth']>,
  cooldownMs: number | undefined,
): Promise<OAuthVerifier> {
  const { issuer, audience } = config;
  // Imported here, not at the top: jose is ~30 modules, and `serve` without OAuth never needs them.
  const { createRemoteJWKSet, errors, jwtVerify } = await import('jose');
  const jwksUri = config.jwksUri ?? (await discoverJwksUri(issuer));
  const keys = createRemoteJWKSet(new URL(jwksUri), cooldownMs === undefined ? {} : { cooldownDuration: cooldownMs });
  return {
    issuer,
    audience,
    async verify(token) {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keys, {
          issuer,
          audience,
          clockTolerance: CLOCK_TOLERANCE_S,
          requiredClaims: ['exp'],
        }));
      } catch (error) {
        const why = jwtProblem(errors, error);
        // The issuer's keys could not be read: no fault of the token, and no reason to tell the client it is bad.
        if (why === undefined)
          throw hostError(
            'RH_ERR_SERVE_AUTH',
            [
              `the key set of the OAuth issuer ${issuer} at ${jwksUri} could not be read to verify a token: ${messageOf(error)}`,
            ],
            error,
          );
        return invalidToken(why);
      }
      const name = typeof payload.sub === 'string' && payload.sub ? payload.sub : payload.client_id;
      if (typeof name !== 'string' || !name)
        return invalidToken('the token names no subject (sub) and no client (client_id)');
      return { name, scopes: scopesOf(payload), via: 'oauth' };
    },
  };
}

/** Why jose refused a token, in words for the client; `undefined` when the fault is not the token's. */
function jwtProblem(jose: typeof import('jose').errors, error: unknown): string | undefined {
  if (error instanceof jose.JWTExpired) return 'the token has expired';
  if (error instanceof jose.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return 'the token was issued by another issuer';
    if (error.claim === 'aud') return 'the token is for another audience (resource)';
    if (error.claim === 'nbf') return 'the token is not valid yet';
    return `the token's "${error.claim}" claim is missing or invalid`;
  }
  if (error instanceof jose.JWKSNoMatchingKey) return 'the token is signed by a key the issuer does not publish';
  if (error instanceof jose.JWKSMultipleMatchingKeys || error instanceof jose.JWSSignatureVerificationFailed)
    return 'the token signature does not verify';
  if (
    error instanceof jose.JWSInvalid ||
    error instanceof jose.JWTInvalid ||
    error instanceof jose.JOSEAlgNotAllowed ||
    error instanceof jose.JOSENotSupported
  )
    return 'the token is not a valid signed JWT';
  // The key set could not be fetched or read (a timeout, a non-200, bad JSON): the issuer's fault.
  return undefined;
}

function scopesOf(payload: JWTPayload): string[] {
  if (typeof payload.scope === 'string') return payload.scope.split(' ').filter(Boolean);
  const scp = payload.scp;
  if (typeof scp === 'string') return scp.split(' ').filter(Boolean);
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === 'string');
  return [];
}

/**
 * The issuer's `jwks_uri`, from its authorization server metadata (RFC 8414: the well-known path
 * goes before the issuer's own path) or, failing that, its OpenID configuration (appended to it).
 */
async function discoverJwksUri(issuer: string): Promise<string> {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, '');
  const candidates = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}${path}/.well-known/openid-configuration`,
  ];
  const problems: string[] = [];
  for (const candidate of candidates) {
    try {
      const response = await fetch(candidate, { signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS) });
      if (!response.ok) {
        problems.push(`${candidate}: HTTP ${response.status}`);
        continue;
      }
      const text = await readTextWithin((response.body ?? []) as AsyncIterable<Uint8Array>, 'the metadata');
      const metadata = JSON.parse(text) as { issuer?: unknown; jwks_uri?: unknown };
      // RFC 8414 §3.3: metadata that names another issuer must not be used.
      if (metadata.issuer !== issuer) {
        problems.push(`${candidate}: names the issuer ${JSON.stringify(metadata.issuer)}, not ${issuer}`);
        continue;
      }
      if (typeof metadata.jwks_uri !== 'string') {
        problems.push(`${candidate}: has no jwks_uri`);
        continue;
      }
      return metadata.jwks_uri;
    } catch (error) {
      problems.push(`${candidate}: ${messageOf(error)}`);
    }
  }
  throw hostError('RH_ERR_SERVE_AUTH', [
    `cannot find the key set of the OAuth issuer ${issuer} (set serve.auth.oauth.jwksUri to skip discovery):\n  ${problems.join('\n  ')}`,
  ]);
}

/**
 * The `WWW-Authenticate` challenge of a refusal (RFC 6750 §3, RFC 9728 §5.1): the error when a
 * token was given, and where an OAuth client learns how to get one.
 */
export function challenge(refusal: AuthRefusal, resourceMetadata: string | undefined): string {
  const params: string[] = [];
  if (refusal.error) params.push(`error="${refusal.error}"`);
  if (refusal.description) params.push(`error_description="${refusal.description.replace(/["\\]/g, "'")}"`);
  if (refusal.scope) params.push(`scope="${refusal.scope}"`);
  if (resourceMetadata) params.push(`resource_metadata="${resourceMetadata}"`);
  return params.length ? `Bearer ${params.join(', ')}` : 'Bearer';
}

/** The RFC 9728 document for the MCP endpoint at `resource`. */
export function protectedResourceMetadata(resource: string, described: ProtectedResource): Record<string, unknown> {
  return {
    resource,
    authorization_servers: described.authorizationServers,
    ...(described.scopesSupported ? { scopes_supported: described.scopesSupported } : {}),
    bearer_methods_supported: ['header'],
  };
}
