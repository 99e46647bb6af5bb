/**
 * `rousseau-host serve`: the loaded tools over MCP on HTTP for a team (docs/serve.md). Callers
 * authenticate (`serve.auth`: bearer tokens, OAuth), and a stop signal drains the calls in flight
 * before the host closes. `start --mcp-http PORT` is the same server under its older name.
 */
import type { Host } from '../host.ts';
import { createServeAuth } from '../mcp/auth.ts';
import { EXIT, hostFromFlags, printError, UsageError, type Command, type Values } from './command.ts';
import type { Stop } from './signals.ts';

/** The port `serve` listens on when neither `--port` nor `serve.port` names one. */
const DEFAULT_PORT = 7331;

/** How long calls in flight may finish after a stop signal, when `serve.shutdownTimeoutMs` says nothing. */
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

export const serve: Command = {
  name: 'serve',
  summary:
    'Serve every loaded tool over MCP (Streamable HTTP at /mcp) to a team: callers authenticate with the tokens or the OAuth issuer of serve.auth, and SIGTERM or Ctrl-C lets the calls in flight finish (serve.shutdownTimeoutMs) before it exits 0. Without serve.auth it listens on loopback only. --host-id ID names this host on its audit lines and session ids, as behind a load balancer (default: $ROUSSEAU_HOST_ID, else hostname-pid).',
  usage: 'serve [--host H] [--port P] [--stateless] [--host-id ID] [--yes]',
  options: {
    host: { type: 'string' },
    port: { type: 'string' },
    stateless: { type: 'boolean' },
    'host-id': { type: 'string' },
    yes: { type: 'boolean', short: 'y' },
  },
  async run({ values, positionals, stop }) {
    if (positionals.length)
      throw new UsageError(`serve takes no positional arguments (got "${positionals.join(' ')}")`);
    if (values.host !== undefined && !values.host) throw new UsageError('--host takes an address, e.g. 0.0.0.0');
    return serveHttp(values, stop, {
      ...(values.port === undefined ? {} : { port: parsePort(values.port, '--port') }),
      ...(typeof values.host === 'string' ? { hostname: values.host } : {}),
    });
  },
};

/** A port number from a flag, or a usage error naming the flag. */
export function parsePort(value: Values[string], flag: string): number {
  const port = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || port > 65535)
    throw new UsageError(`${flag} takes a port number (0 to 65535); got "${String(value)}"`);
  return port;
}

export interface ServeFlags {
  port?: number;
  hostname?: string;
  /** Reloads plugins when their files change (`start --watch`); returns the stop. */
  watch?: (host: Host) => () => void;
}

/**
 * Loads the host and serves it over HTTP until a stop signal, then shuts down gracefully. Flags
 * win over the config's `serve` section; `--stateless` is read from `values`.
 */
export async function serveHttp(values: Values, stop: Stop, flags: ServeFlags): Promise<number> {
  const approve = values.yes ? () => true : undefined; // no one to ask: `ask` is a denial without --yes
  const host = await hostFromFlags(values, approve ? { approve } : {});
  const stopWatching = flags.watch?.(host);
  try {
    const config = host.config.serve ?? {};
    const auth = await createServeAuth(config.auth);
    const { serveMcpHttp } = await import('../mcp/serve.ts');
    const stateless = values.stateless === true || config.stateless === true;
    const server = await serveMcpHttp(host, {
      port: flags.port ?? config.port ?? DEFAULT_PORT,
      hostname: flags.hostname ?? config.host ?? '127.0.0.1',
      stateless,
      askClient: !values.yes,
      ...(auth ? { authenticate: auth.authenticate } : {}),
      ...(auth?.protectedResource ? { protectedResource: auth.protectedResource } : {}),
      ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
    });
    // The host id and the mode are what a load balancer's config must agree with (serve.md).
    printError(
      `rousseau-host: serving ${host.tools().length} tools over MCP at ${server.url} (host ${host.hostId}, ${stateless ? 'stateless' : 'sessions'}; auth: ${auth?.describe ?? 'none, loopback only'}; Ctrl-C or SIGTERM stops)`,
    );
    const { signal } = stop;
    await new Promise<void>((done) =>
      signal.aborted ? done() : signal.addEventListener('abort', () => done(), { once: true }),
    );
    const graceMs = config.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    printError(`rousseau-host: stopping; calls in flight have up to ${graceMs} ms to finish`);
    await server.close(graceMs);
    stop.stoppedCleanly();
    return EXIT.ok;
  } finally {
    stopWatching?.();
    await host.close();
  }
}
