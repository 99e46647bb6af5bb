/**
 * The environment a command sees: only allow-listed variables of the host's, so API keys and tokens
 * in the host's environment never reach a command the model wrote.
 */

/** The variables of `source` whose names are in `allow` (a name, or a prefix ending in `*`). */
export function scrubEnv(source: NodeJS.ProcessEnv, allow: readonly string[]): NodeJS.ProcessEnv {
  const exact = new Set(allow.filter((a) => !a.endsWith('*')));
  const prefixes = allow.filter((a) => a.endsWith('*')).map((a) => a.slice(0, -1));
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && (exact.has(name) || prefixes.some((p) => name.startsWith(p)))) env[name] = value;
  }
  return env;
}
