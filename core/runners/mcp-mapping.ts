/**
 * The two translations MCP needs, both ways: our annotations ⇄ MCP's hints, and an MCP server's
 * tool names → names every provider accepts. Pure functions, shared by the server and the client.
 */
import type { ToolAnnotations } from '../contract.ts';
import { providerSafeName, unusedName } from '../tool-names.ts';

/** MCP's `ToolAnnotations` (spec 2025-11-25): hints only, never trusted for enforcement. */
export interface McpAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

const TO_MCP = [
  ['readOnly', 'readOnlyHint'],
  ['destructive', 'destructiveHint'],
  ['idempotent', 'idempotentHint'],
  ['openWorld', 'openWorldHint'],
] as const;

/** Our annotations as MCP hints; `undefined` when there is nothing to say. */
export function toMcpAnnotations(a: ToolAnnotations | undefined): McpAnnotations | undefined {
  if (!a) return undefined;
  const out: McpAnnotations = {};
  if (typeof a.title === 'string') out.title = a.title;
  for (const [ours, theirs] of TO_MCP) if (typeof a[ours] === 'boolean') out[theirs] = a[ours];
  return Object.keys(out).length ? out : undefined;
}

/**
 * An MCP server's hints as our annotations. `readOnlyHint` is dropped on purpose: the policy lets
 * read-only tools through by default (`readOnlyDefault`), and the spec says a client must not trust
 * a server's hints for that; allow a server's tools explicitly with a rule (`{ tool: 'name_*' }`).
 */
export function fromMcpAnnotations(hints: unknown, title?: unknown): ToolAnnotations | undefined {
  // Own hints only: one inherited from Object.prototype is not the server's.
  const hint = (key: string): unknown =>
    hints !== null && typeof hints === 'object' && Object.hasOwn(hints, key)
      ? (hints as Record<string, unknown>)[key]
      : undefined;
  const out: ToolAnnotations = {};
  const t = typeof title === 'string' ? title : hint('title');
  if (typeof t === 'string') out.title = t;
  for (const [ours, theirs] of TO_MCP) {
    const value = hint(theirs);
    if (ours !== 'readOnly' && typeof value === 'boolean') out[ours] = value;
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * Maps an MCP server's tool names to provider-safe names (`^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`):
 * `<plugin>_<tool>`, every other character replaced by `_`, cut to 64. Two names that land on the
 * same result (`a.b` and `a_b`) are a collision: the later one gets a numbered suffix, and the
 * collision is returned so the loader can warn about it. A name listed twice is no collision but
 * the same tool: it maps to the same name, which the contract check refuses as a duplicate. A
 * suffix would have given the server's one tool two names, and a deny rule on one of them would
 * have left the other free.
 */
export function mapToolNames(
  plugin: string,
  names: readonly string[],
): { names: string[]; collisions: { original: string; with: string; name: string }[] } {
  const taken = new Map<string, string>();
  const given = new Map<string, string>();
  const collisions: { original: string; with: string; name: string }[] = [];
  const out = names.map((original) => {
    const again = given.get(original);
    if (again !== undefined) return again;
    const base = providerSafeName(`${plugin}_${original}`);
    const name = unusedName(base, taken);
    if (name !== base) collisions.push({ original, with: taken.get(base)!, name });
    taken.set(name, original);
    given.set(original, name);
    return name;
  });
  return { names: out, collisions };
}
