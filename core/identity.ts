/**
 * Who the host is: its name and version, for `--version` and for MCP peers (`serverInfo` as a
 * server, `clientInfo` as a client), and which of several hosts it is (its host id).
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from './paths.ts';

export const HOST_INFO = {
  name: 'rousseau-host',
  version: (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version,
};

/**
 * What a host id may hold: it begins an HTTP session id (`<host id>.<uuid>`), which a load balancer
 * reads to route the session (docs/serve.md, "Several hosts behind a load balancer"), and it is
 * written unescaped into the audit. Letters, digits, `_`, `.` and `-`, at most 64, not beginning
 * with a `.` or `-`.
 */
const HOST_ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;

/** Why `id` cannot be a host id, or undefined when it can. */
export function hostIdProblem(id: string): string | undefined {
  return HOST_ID.test(id)
    ? undefined
    : `a host id is 1 to 64 letters, digits, "_", "." or "-", not beginning with "." or "-"; got ${JSON.stringify(id)}`;
}

/**
 * The host id when none is given: this machine's name and the process id, so two hosts on one
 * machine differ, and so do two runs of one host (a restart is a new session space). Characters a
 * host id may not hold become `-`.
 */
export function defaultHostId(): string {
  const name =
    hostname()
      .replace(/[^A-Za-z0-9_.-]/g, '-')
      .replace(/^[.-]+/, '')
      .slice(0, 48) || 'host';
  return `${name}-${process.pid}`;
}
