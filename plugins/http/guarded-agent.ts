/**
 * The SSRF guard, at the only place that knows the real address: the connection.
 *
 * - A hostname is resolved by the agent's `lookup`, wrapped so that every answer (all of them, when
 *   Node asks for all to race IPv4 and IPv6) must be allowed; one bad answer refuses them all. Node
 *   connects to an address of that same answer, so the address checked is the address used: a DNS
 *   answer that changes between a check and the connect has no second lookup to change in.
 * - An IP literal never goes through `lookup`, so `createConnection` judges it itself.
 * - Once the TCP connection is up, before TLS sends anything, the socket's `remoteAddress` is judged
 *   again: the last word belongs to the kernel's idea of the peer.
 * No keep-alive: every request and every redirect hop opens, resolves and checks a new connection.
 */
import type { LookupAddress, LookupOneOptions, LookupAllOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns';
import { Agent, type AgentOptions, type RequestOptions } from 'node:https';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { describeVerdict, judgeAddress, type AddressVerdict } from './address-policy.ts';
import { HttpToolError } from './errors.ts';

export interface GuardOptions {
  /** Resolves hostnames: `dns.lookup` unless a test injects answers. */
  lookup?: LookupFunction;
  allowForTests?: readonly string[];
}

export class GuardedAgent extends Agent {
  readonly #allow: readonly string[];
  readonly #lookup: LookupFunction;

  constructor(guard: GuardOptions, options: AgentOptions = {}) {
    const lookup = guardLookup(guard.lookup ?? (dnsLookup as LookupFunction), guard.allowForTests ?? []);
    super({ ...options, keepAlive: false, lookup });
    this.#allow = guard.allowForTests ?? [];
    this.#lookup = lookup;
  }

  override createConnection(
    options: RequestOptions,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const host = (options.host ?? options.hostname ?? '').replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const verdict = judgeAddress(host, this.#allow);
      if (!verdict.allowed) {
        callback?.(blocked(verdict), undefined as never);
        return undefined;
      }
    }
    const socket = super.createConnection({ ...options, lookup: this.#lookup }, callback) as Socket | undefined;
    socket?.once('connect', () => {
      const verdict = judgeAddress(socket.remoteAddress ?? '', this.#allow);
      if (!verdict.allowed) socket.destroy(blocked(verdict));
    });
    return socket;
  }
}

function blocked(verdict: AddressVerdict): HttpToolError {
  return new HttpToolError(
    'blocked_address',
    `refusing to connect to ${describeVerdict(verdict)}: http_get reaches public addresses only`,
  );
}

/** Wraps a lookup so that it answers only when every address it returns is allowed. */
export function guardLookup(inner: LookupFunction, allowForTests: readonly string[]): LookupFunction {
  return ((hostname: string, options: LookupOneOptions | LookupAllOptions, callback: (...args: unknown[]) => void) => {
    inner(hostname, options, ((
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => {
      if (error) return callback(error);
      const answers = Array.isArray(address) ? address : [{ address, family: family ?? 0 }];
      for (const answer of answers) {
        const verdict = judgeAddress(answer.address, allowForTests);
        if (!verdict.allowed)
          return callback(
            new HttpToolError(
              'blocked_address',
              `${hostname} resolves to ${describeVerdict(verdict)}: http_get reaches public addresses only`,
            ),
          );
      }
      if (answers.length === 0) return callback(new HttpToolError('request_failed', `${hostname} has no address`));
      callback(null, address, family);
    }) as never);
  }) as LookupFunction;
}
