/**
 * The approval policy: rules under `deny`, `ask` and `allow`, decided on the canonical JSON of the
 * *validated* input. Precedence: deny, then ask, then allow, then the default (`readOnlyDefault`
 * for tools annotated read-only). Rules compile when the config loads; a bad regex is a config error.
 */
import type { PolicyConfig, PolicyRuleConfig } from './config-schema.ts';
import { hostError } from './errors.ts';
import type { ToolInfo } from './types.ts';

export type Decision = 'allow' | 'ask' | 'deny';

export interface PolicyDecision {
  decision: Decision;
  /** The rule that decided, with the list it came from; absent when a default decided. */
  rule?: PolicyRuleConfig & { list: Decision; index: number };
  reason?: string;
}

export interface Policy {
  /** Whether any rule reads the input (so callers can skip computing the canonical form). */
  readonly readsInput: boolean;
  decide(tool: Pick<ToolInfo, 'name' | 'annotations'>, canonical: () => string, input: unknown): PolicyDecision;
}

interface CompiledRule {
  source: PolicyRuleConfig & { list: Decision; index: number };
  tool: RegExp;
  match?: RegExp;
  where?: [string, RegExp][];
}

/** Rules shipped with the host: the seed's deny rule for private and metadata addresses, in canonical form. */
export const BUILTIN_RULES: Required<Pick<PolicyConfig, 'deny'>> = {
  deny: [
    {
      tool: 'http_get',
      match: '"url":"https?://(\\[|localhost|127\\.|10\\.|0\\.|169\\.254\\.|192\\.168\\.|172\\.(1[6-9]|2[0-9]|3[01])\\.|100\\.(6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7])\\.|metadata\\.)',
      reason: 'private, loopback, link-local and metadata addresses are not reachable from tools',
    },
  ],
};

export function compilePolicy(config: PolicyConfig = {}, origin = 'config'): Policy {
  const rules: Record<Decision, CompiledRule[]> = { deny: [], ask: [], allow: [] };
  const useBuiltins = config.builtinRules !== false;
  for (const list of ['deny', 'ask', 'allow'] as const) {
    const given = [...(config[list] ?? []), ...(useBuiltins && list === 'deny' ? BUILTIN_RULES.deny : [])];
    given.forEach((rule, index) => rules[list].push(compileRule(rule, list, index, origin)));
  }
  const fallback = config.default ?? 'ask';
  const readOnlyFallback = config.readOnlyDefault ?? 'allow';
  const all = [...rules.deny, ...rules.ask, ...rules.allow];
  // Shared results for the defaults: a decision is read, never changed, and this runs on every call.
  const readOnlyDefault: PolicyDecision = Object.freeze({ decision: readOnlyFallback });
  const otherDefault: PolicyDecision = Object.freeze({ decision: fallback });
  const readsInput = all.some((r) => r.match || r.where);

  return {
    readsInput,
    decide(tool, canonical, input) {
      for (const rule of all) {
        if (!rule.tool.test(tool.name)) continue;
        if (rule.match && !rule.match.test(canonical())) continue;
        if (rule.where && !matchesWhere(rule.where, input)) continue;
        return { decision: rule.source.list, rule: rule.source, ...(rule.source.reason ? { reason: rule.source.reason } : {}) };
      }
      return tool.annotations?.readOnly ? readOnlyDefault : otherDefault;
    },
  };
}

function compileRule(rule: PolicyRuleConfig, list: Decision, index: number, origin: string): CompiledRule {
  const at = `policy.${list}[${index}]`;
  const compile = (pattern: string, key: string, anchored = false) => {
    try {
      return new RegExp(anchored ? `^(?:${pattern})$` : pattern, 'u');
    } catch (error) {
      throw hostError('RH_ERR_CONFIG_INVALID', [origin, `  ${at}.${key}: invalid regular expression: ${(error as Error).message}`]);
    }
  };
  return {
    source: { ...rule, list, index },
    tool: globToRegExp(rule.tool),
    ...(rule.match === undefined ? {} : { match: compile(rule.match, 'match') }),
    ...(rule.where === undefined
      ? {}
      : { where: Object.entries(rule.where).map(([field, pattern]) => [field, compile(pattern, `where.${field}`, true)] as [string, RegExp]) }),
  };
}

function matchesWhere(where: [string, RegExp][], input: unknown): boolean {
  if (input === null || typeof input !== 'object') return false;
  return where.every(([field, re]) => {
    const value = (input as Record<string, unknown>)[field];
    if (value === undefined) return false;
    return re.test(typeof value === 'string' ? value : JSON.stringify(value));
  });
}

/** `fs_*` → /^fs_.*$/; `?` matches one character; everything else is literal. */
export function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}
