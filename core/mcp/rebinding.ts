/**
 * The DNS-rebinding guard: a page on another site may make a browser send requests to a server on
 * loopback, under a name it controls that resolves to 127.0.0.1. Such a request carries the page's
 * Origin and the page's Host: a server answers only loopback origins, and a server on loopback only
 * the loopback names (and the public URL's name, which a proxy on the same machine passes on).
 */
import type { IncomingHttpHeaders } from 'node:http';
import ipaddr from 'ipaddr.js';

/** Why a request's Origin or Host is refused (a 403), or undefined when the server answers it. */
export function rebindingRefusal(
  headers: IncomingHttpHeaders,
  loopbackOnly: boolean,
  publicName: string | undefined,
): string | undefined {
  const origin = headers.origin;
  if (origin !== undefined && !isLoopbackOrigin(origin))
    return `Origin ${origin} is not allowed: only loopback origins may call this server`;
  const requestName = hostNameOf(headers.host);
  if (loopbackOnly && !(requestName && (isLoopbackName(requestName) || requestName === publicName)))
    return `Host ${headers.host ?? '(none)'} is not allowed: this server listens on loopback and answers loopback names${publicName ? ` and ${publicName}` : ''} only. Behind a proxy, set serve.publicUrl to the URL clients use (docs/serve.md)`;
  return undefined;
}

/** `localhost`, or an address in a loopback range (127.0.0.0/8, ::1, their IPv4-mapped forms). */
export function isLoopbackName(name: string): boolean {
  const bare = name.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  return ipaddr.isValid(bare) && ipaddr.process(bare).range() === 'loopback';
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackName(url.hostname);
  } catch {
    return false; // `null` (sandboxed frames, file://) and garbage
  }
}

/** The name a `Host` header gives, without its port; undefined when there is none or it is no name. */
function hostNameOf(hostHeader: string | undefined): string | undefined {
  if (!hostHeader) return undefined;
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return undefined;
  }
}
