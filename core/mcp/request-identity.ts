/**
 * Who a request over MCP is, as it travels through the SDK to the server's handlers: the caller an
 * HTTP front end authenticated and the places its calls took under the caller's limits, both in
 * the request's `AuthInfo` (the one thing the SDK hands on), and the tag a session's calls carry.
 */
import { createHash } from 'node:crypto';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Caller } from '../types.ts';
import type { CallPlaces } from './caller-limits.ts';

/**
 * The caller an HTTP front end authenticated: it puts the `Caller` in `req.auth.extra.caller`, and
 * the SDK hands that `AuthInfo` to each request's handler. The token itself is never passed on.
 */
export function callerOf(auth: AuthInfo | undefined): Caller | undefined {
  const caller = auth?.extra?.caller as Caller | undefined;
  return caller && typeof caller.name === 'string' ? caller : undefined;
}

/** The `AuthInfo` an HTTP front end hands the SDK for a caller (`req.auth`). */
export function authInfoOf(caller: Caller): AuthInfo {
  return { token: '', clientId: caller.name, scopes: [...caller.scopes], extra: { caller } };
}

/**
 * The request's `AuthInfo` holding the in-flight places its tool calls took under the caller's
 * limits (serve.ts): each call holds its own until it has ended and its tool has stopped. Not until
 * its response is sent: the SDK sends none for a cancelled call, and a session's call runs on when
 * its client drops the request.
 */
export function withPlaces(auth: AuthInfo | undefined, places: CallPlaces): AuthInfo {
  return { token: '', clientId: '', scopes: [], ...auth, extra: { ...auth?.extra, places } };
}

export function placesOf(auth: AuthInfo | undefined): CallPlaces | undefined {
  return auth?.extra?.places as CallPlaces | undefined;
}

/**
 * What a session's calls are tagged with (`ctx.sessionId`, the audit trail, approvals for the
 * session): a digest of its id, never the id. Over HTTP the id is the session's only credential;
 * a plugin, or anyone who can read the audit file, holding it could open the session's stream,
 * replay its events (other calls' results) or end it.
 */
export function sessionTag(sessionId: string): string {
  return `mcp-${createHash('sha256').update(sessionId).digest('hex').slice(0, 32)}`;
}
