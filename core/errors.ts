/**
 * The host's error vocabulary, in one place.
 *
 * Two kinds:
 * - `ResultCode`: why a tool call failed. The model and every caller see it on the result; a call
 *   never throws (see dispatch.ts).
 * - `HostErrorCode`: why the host could not do what was asked (a bad config, a plugin that failed to
 *   load, API misuse). Carried by `HostError`, created by `hostError` with the message template
 *   registered here, like Fastify's `FST_ERR_*`.
 */

/** The `code` of a failed call result (`call --json`, MCP `isError` results, the audit log). */
export const RESULT_CODES = [
  'invalid_json',
  'invalid_input',
  'unknown_tool',
  'denied',
  'timeout',
  'cancelled',
  'crashed',
  'quarantined',
  'tool_error',
  'invalid_output',
  'output_too_large',
] as const;
export type ResultCode = (typeof RESULT_CODES)[number];

const HOST_ERRORS = {
  RH_ERR_USAGE: '%s',
  RH_ERR_CONFIG_NOT_FOUND: 'Config file not found: %s',
  RH_ERR_CONFIG_LOAD: 'Cannot load config %s: %s',
  RH_ERR_CONFIG_INVALID: 'Invalid config %s:\n%s',
  RH_ERR_PLUGIN_NOT_FOUND: "Cannot resolve plugin '%s' from %s: %s",
  RH_ERR_PLUGIN_IMPORT: "Cannot import plugin '%s': %s",
  RH_ERR_PLUGIN_CONTRACT: "Plugin '%s' breaks the tool contract:\n%s",
  RH_ERR_PLUGIN_OPTIONS: "Plugin '%s' options are invalid:\n%s",
  RH_ERR_PLUGIN_SETUP: "Plugin '%s' setup() threw: %s",
  RH_ERR_PLUGIN_LOAD_TIMEOUT: "Plugin '%s' did not finish loading within %d ms (%s)",
  RH_ERR_PLUGIN_DUPLICATE: "Plugin name '%s' is already taken by %s",
  RH_ERR_TOOL_COLLISION: "Tool '%s' of plugin '%s' collides with the tool of the same name in plugin '%s'",
  RH_ERR_PLUGIN_CRASHED: "Plugin '%s' crashed while loading: %s",
  RH_ERR_MCP_CONNECT: "Cannot connect to MCP server '%s': %s",
  RH_ERR_SERVE_NO_AUTH:
    "Refusing to serve on %s without authentication: anyone who can reach that address could call your tools. Add tokens to the config, e.g. serve: { auth: { tokens: [{ name: 'ci', tokenEnv: 'ROUSSEAU_TOKEN_CI' }] } } and start it with ROUSSEAU_TOKEN_CI=$(openssl rand -hex 32) (or serve.auth.oauth for an OAuth issuer), or serve on 127.0.0.1 (docs/serve.md, in node_modules/rousseau-host/docs/ once installed)",
  RH_ERR_SERVE_AUTH: 'Cannot set up authentication (serve.auth): %s',
  RH_ERR_HOST_CLOSED: 'The host is closed',
  RH_ERR_INTERNAL: 'Internal error: %s',
} as const;
export type HostErrorCode = keyof typeof HOST_ERRORS;
export const HOST_ERROR_CODES = Object.keys(HOST_ERRORS) as HostErrorCode[];

/** An error of the host itself. `code` is stable; `message` is for people. */
export class HostError extends Error {
  override readonly name = 'HostError';
  readonly code: HostErrorCode;
  constructor(code: HostErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Builds a `HostError` from the message template registered for `code` (`%s`, `%d` in order). */
export function hostError(code: HostErrorCode, args: readonly (string | number)[], cause?: unknown): HostError {
  let i = 0;
  const message = HOST_ERRORS[code].replace(/%[sd]/g, () => String(args[i++] ?? ''));
  return new HostError(code, message, cause === undefined ? undefined : { cause });
}

/**
 * A plugin that did not load within `ms`, with the likely cause for its kind: an MCP server has no
 * `setup()`, and the first `npx -y` run of one spends the time downloading its package.
 */
export function loadTimeoutError(source: string, ms: number, mcpServer: boolean): HostError {
  const why = mcpServer
    ? "an MCP server must start, answer initialize and list its tools by then; a first `npx -y` run downloads its package first: install the package in the project, or raise the entry's loadTimeoutMs"
    : 'a top-level await or a setup() that never resolves?';
  return hostError('RH_ERR_PLUGIN_LOAD_TIMEOUT', [source, ms, why]);
}

/**
 * The message of anything thrown, for people. A plugin may throw a string, `null`, anything: an
 * Error whose `message` getter throws, a Proxy whose every trap throws, an object with no
 * prototype. Never throws itself, since the host calls it while handling a failure.
 */
export function messageOf(thrown: unknown): string {
  try {
    if (thrown instanceof Error) return String(thrown.message || thrown.name);
    if (typeof thrown === 'string') return thrown;
    try {
      return JSON.stringify(thrown) ?? String(thrown);
    } catch {
      return String(thrown);
    }
  } catch {
    return `a thrown ${typeof thrown} that cannot be read`;
  }
}
