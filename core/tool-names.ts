/**
 * Tool names every provider accepts (`^[a-zA-Z0-9_-]{1,64}$` for Anthropic and OpenAI), made from
 * names that may not fit: an MCP server's tools, and any host tool on its way to a model. A plugin's
 * own tools already fit (the contract holds them to the stricter `TOOL_NAME` in check.ts), so they
 * pass through unchanged. Imports nothing, so the agent loop and MCP both build on it.
 */

const MAX_LENGTH = 64;

/** `name` with every character a provider rejects replaced by `_`, cut to 64 characters. */
export function providerSafeName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, MAX_LENGTH);
}

/**
 * `base`, or else the first of `base_2`, `base_3`, … (`base` cut so the suffix still fits in 64)
 * that `taken` does not hold: two names that sanitise alike (`a.b`, `a_b`) both stay callable.
 */
export function unusedName(base: string, taken: { has(name: string): boolean }): string {
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base.slice(0, MAX_LENGTH - String(n).length - 1)}_${n}`;
  return name;
}
