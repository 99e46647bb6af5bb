/**
 * What the HTTP server answers beside the MCP endpoint, for load balancers and metrics scrapers:
 * `/healthz` (the process is up), `/readyz` (it can serve calls) and `/metrics` (Prometheus).
 * docs/serve.md, "Metrics and tracing", says what each answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Host } from '../host.ts';
import type { PluginState } from '../types.ts';
import { createHostMetrics, METRICS_CONTENT_TYPE, type ServerFigures } from './metrics.ts';

export const HEALTH_PATH = '/healthz';
export const READY_PATH = '/readyz';
export const METRICS_PATH = '/metrics';

export interface ProbeOptions extends ServerFigures {
  /** True once the server is closing: `/readyz` then says so, and a load balancer sends no more. */
  closing: () => boolean;
  /**
   * Whether a `/metrics` request may be answered; when not, it has answered the request itself
   * (401, or 403 for a caller without the grant). Absent: anyone who reaches the server may read
   * its metrics. `/healthz` and `/readyz` are never authenticated: load balancers call them.
   */
  authorizeMetrics?: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
}

export interface Probes {
  /** Answers `req` when it asks for one of the probe paths, and says whether it did. */
  answer(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean>;
  /** Stops counting calls. */
  close(): void;
}

/** Why the host is not ready, or undefined when it is: shutting down, or plugins not loaded. */
export type NotReady =
  | { status: 'shutting_down' }
  | { status: 'plugins_not_loaded'; notLoaded: Record<Exclude<PluginState, 'loaded'>, number> };

/**
 * Ready: every plugin loaded and nothing closing. The body counts the plugins that are not loaded,
 * and names none: the probe is unauthenticated, and a plugin's name tells of tools the policy may
 * hide from every caller. `rousseau_plugin_state` in `/metrics` (an operator's view) names them.
 */
export function notReady(host: Host, closing: boolean): NotReady | undefined {
  if (closing || host.closing) return { status: 'shutting_down' };
  const notLoaded = { failed: 0, quarantined: 0 };
  let down = 0;
  for (const p of host.plugins())
    if (p.status !== 'loaded') {
      notLoaded[p.status]++;
      down++;
    }
  return down ? { status: 'plugins_not_loaded', notLoaded } : undefined;
}

export function createProbes(host: Host, options: ProbeOptions): Probes {
  const metrics = createHostMetrics(host, options);
  return {
    close: () => metrics.close(),
    async answer(req, res, pathname) {
      if (pathname !== HEALTH_PATH && pathname !== READY_PATH && pathname !== METRICS_PATH) return false;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
        res.end(`Method not allowed: ${pathname} answers GET and HEAD\n`);
        return true;
      }
      if (pathname === HEALTH_PATH) {
        send(req, res, 200, 'text/plain; charset=utf-8', 'ok\n');
      } else if (pathname === READY_PATH) {
        const why = notReady(host, options.closing());
        const body = why ? { ready: false, ...why } : { ready: true, status: 'ready' };
        send(req, res, why ? 503 : 200, 'application/json', `${JSON.stringify(body)}\n`);
      } else if (!options.authorizeMetrics || (await options.authorizeMetrics(req, res))) {
        send(req, res, 200, METRICS_CONTENT_TYPE, metrics.render());
      }
      return true;
    },
  };
}

function send(req: IncomingMessage, res: ServerResponse, status: number, type: string, body: string): void {
  // Probes are polled: a cache in between would answer for a host that is gone.
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
