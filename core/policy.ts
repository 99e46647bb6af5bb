/**
 * The approval policy: rules under `deny`, `ask` and `allow`, decided on the *validated* input in
 * its canonical form (canonical-json.ts). Precedence: deny, then ask, then allow, then the default
 * (`readOnlyDefault` for tools annotated read-only, `default` for the rest). Rules compile when the
 * config loads: a bad regex is a config error naming the rule (`policy.deny[0].match`).
 *
 * Regexes run on text the model controls, so a rule must not be able to hang the host: patterns
 * compile through linear-regex.ts (linear-time engine, no flags beyond `s`). See docs/policy.md.
 *
 * A rule may name callers and scopes (`callers`, `scopes`): it then matches only calls from such a
 * caller, and never a call without one. A tool a caller can never call is hidden from them
 * (`canEverCall`): the MCP server leaves it out of their `tools/list`, the dispatcher answers them
 * as if it did not exist.
 */
import { canonicalJson } from './canonical-json.ts';
import type { PolicyConfig, PolicyRuleConfig } from './config-schema.ts';
import { hostError, messageOf } from './errors.ts';
import { segments, valueAt } from './json-pointer.ts';
import { linearRegExp } from './linear-regex.ts';
import { plainData } from './safe-json.ts';
import type { Caller, CallOptions, ToolInfo } from './types.ts';

export type Decision = 'allow' | 'ask' | 'deny';

/** A rule as the policy applies it: the config entry, and where it came from. */
export interface PolicyRule extends PolicyRuleConfig {
  /** `policy.deny[0]` (the config), `builtin.deny[0]` (shipped with the host), `session.allow[0]` (an "always" answer). */
  id: string;
  list: Decision;
  /** Session rules only: the exact canonical input they allow, and nothing else. */
  input?: string;
}

export interface PolicyDecision {
  decision: Decision;
  /** The rule that decided; absent when a default decided. */
  rule?: PolicyRule;
  /** Which default decided, when no rule did: `readOnlyDefault` for a tool annotated read-only. */
  default?: 'default' | 'readOnlyDefault';
  reason?: string;
}

/** Who asks and in which session: rules may name callers, and "always" grants belong to both. */
export type PolicyContext = Pick<CallOptions, 'sessionId' | 'caller'>;

export interface Policy {
  /** `canonical` is called only when a rule reads the whole input, or a session rule may apply. */
  decide(
    tool: Pick<ToolInfo, 'name' | 'annotations'>,
    canonical: () => string,
    input: unknown,
    context?: PolicyContext,
  ): PolicyDecision;
  /**
   * Records an "always" answer as an exact-input rule: this tool with this canonical input is
   * allowed for the rest of the session (`sessionId`; none = the host's lifetime) to the same
   * caller (or to calls without one). It never widens: any other input, tool, session or caller is
   * decided as before. A rule is returned for the audit trail.
   */
  allowForSession(tool: string, canonical: string, context?: PolicyContext): PolicyRule;
  /**
   * False when no input can make a call from `caller` to this tool run: the first rule that applies
   * to the caller and reads no input (no `match`, no `where`) is a deny, or no rule lets them past a
   * `deny` default. Always true without a caller: local calls see every tool, and a denial says why.
   */
  canEverCall(tool: Pick<ToolInfo, 'name' | 'annotations'>, caller: Caller | undefined): boolean;
}

/** A caller as rules read it: own properties only, so Object.prototype can lend no one a name or a scope. */
interface CallerFacts {
  name: string;
  scopes: readonly string[];
}

interface CompiledRule {
  /** Shared by every decision this rule makes: decisions are read, never changed. */
  decision: PolicyDecision;
  match: RegExp | undefined;
  /** Each field as the path of keys that reaches it, and its pattern. */
  where: [string[], RegExp][] | undefined;
  /** Whether the rule applies to a caller, when it names callers or scopes; without one it never does. */
  who: ((caller: CallerFacts | undefined) => boolean) | undefined;
}

/** `localhost` → `[lL][oO]…`: host names are case-insensitive, and rules take no `i` flag (see below). */
const anyCase = (word: string) => word.replace(/[a-z]/g, (c) => `[${c.toUpperCase()}${c}]`);
/** A host in a URL: up to the port, path, query or fragment. */
const HOST_REST = '[^/\\\\?#]*';

/** Rules shipped with the host (`policy.builtinRules: false` drops them). */
const BUILTIN_RULES: Required<Pick<PolicyConfig, 'deny'>> = {
  deny: [
    {
      // Defence in depth beside http_get's own connect-time check (which also resolves names and
      // judges decimal, hex and IPv6 forms): a rule for private, loopback, link-local,
      // CGNAT and metadata addresses written as literals. `https:/h` and `https:\\h` parse as `https://h`.
      tool: 'http_get',
      where: {
        url: [
          '\\s*[a-zA-Z][a-zA-Z0-9+.-]*:[/\\\\]*([^/\\\\?#@]*@)?',
          `(\\[.*|${anyCase('localhost')}\\.?|${HOST_REST}\\.${anyCase('localhost')}\\.?|0|(0|127|10)\\.${HOST_REST}|169\\.254\\.${HOST_REST}`,
          `|192\\.168\\.${HOST_REST}|172\\.(1[6-9]|2[0-9]|3[01])\\.${HOST_REST}|100\\.(6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7])\\.${HOST_REST}`,
          `|${anyCase('metadata')}(\\.${HOST_REST})?)([:/\\\\?#].*)?`,
        ].join(''),
      },
      reason: 'private, loopback, link-local and metadata addresses are not reachable from tools',
    },
  ],
};

const LISTS = ['deny', 'ask', 'allow'] as const;

export function compilePolicy(given: PolicyConfig = {}, origin = 'config'): Policy {
  // Own keys only: a `match` or `default` set on Object.prototype by anyone must not narrow a deny rule or widen the default.
  const config = plainData(given);
  // Each rule as its tool matcher, and the rule compiled. The config's rules compile here, so a bad
  // one is a config error at load. The built-in rules are known to compile, and compile at the first
  // call of a tool they name: a host whose config holds no regex then starts without switching on
  // V8's regex engine flags (linear-regex.ts), which would make V8 refuse Node's code cache for
  // every built-in module loaded after it (~0.1 G instructions over a load of 100 plugins).
  const all: { tool: (name: string) => boolean; compiled: () => CompiledRule }[] = [];
  for (const list of LISTS) {
    for (const [i, rule] of (config[list] ?? []).entries()) {
      const compiled = compileRule(rule, list, `policy.${list}[${i}]`, origin);
      all.push({ tool: toolMatcher(rule.tool), compiled: () => compiled });
    }
    if (list === 'deny' && config.builtinRules !== false) {
      for (const [i, rule] of BUILTIN_RULES.deny.entries()) {
        let compiled: CompiledRule | undefined;
        all.push({
          tool: toolMatcher(rule.tool),
          compiled: () => (compiled ??= compileRule(rule, list, `builtin.deny[${i}]`, origin)),
        });
      }
    }
  }
  const readOnlyDefault = decisionOf({ decision: config.readOnlyDefault ?? 'allow', default: 'readOnlyDefault' });
  const otherDefault = decisionOf({ decision: config.default ?? 'ask', default: 'default' });

  // The rules whose tool pattern matches a tool, in precedence order, found once per tool name:
  // a call then tests only its own tool's rules, however long the policy.
  const byTool = new Map<string, CompiledRule[]>();
  const rulesFor = (name: string) => {
    let rules = byTool.get(name);
    if (!rules) {
      rules = all.filter((r) => r.tool(name)).map((r) => r.compiled());
      byTool.set(name, rules);
    }
    return rules;
  };

  // "always" answers: caller and session → `tool NUL canonical input` → the decision it grants.
  const sessions = new Map<string, Map<string, PolicyDecision>>();

  return {
    decide(tool, canonical, input, context) {
      const caller = callerFacts(context);
      let decided: PolicyDecision | undefined;
      for (const rule of rulesFor(tool.name)) {
        if (rule.who && !rule.who(caller)) continue;
        if (rule.match && !rule.match.test(canonical())) continue;
        if (rule.where && !matchesWhere(rule.where, input)) continue;
        decided = rule.decision;
        break;
      }
      decided ??= isReadOnly(tool) ? readOnlyDefault : otherDefault;
      if (decided.decision === 'ask' && sessions.size) {
        return sessions.get(grantsKey(caller, context))?.get(`${tool.name}\u0000${canonical()}`) ?? decided;
      }
      return decided;
    },

    allowForSession(tool, canonical, context) {
      const key = grantsKey(callerFacts(context), context);
      let grants = sessions.get(key);
      if (!grants) {
        grants = new Map();
        sessions.set(key, grants);
      }
      const grant = `${tool}\u0000${canonical}`;
      const known = grants.get(grant)?.rule;
      if (known) return known;
      const rule: PolicyRule = Object.freeze({
        id: `session.allow[${grants.size}]`,
        list: 'allow',
        tool,
        input: canonical,
        reason: 'approved "always" for this exact input in this session',
      });
      grants.set(grant, decisionOf({ decision: 'allow', rule, reason: rule.reason! }));
      return rule;
    },

    canEverCall(tool, given) {
      const caller = callerFacts({ caller: given });
      if (!caller) return true;
      for (const rule of rulesFor(tool.name)) {
        if (rule.who && !rule.who(caller)) continue;
        // A rule that reads the input decides only some calls: a deny leaves others to the rules
        // below it, an ask or an allow lets some through.
        if (rule.match || rule.where) {
          if (rule.decision.decision === 'deny') continue;
          return true;
        }
        return rule.decision.decision !== 'deny';
      }
      return (isReadOnly(tool) ? readOnlyDefault : otherDefault).decision !== 'deny';
    },
  };
}

/** The context's caller, read from own properties (a session's grants are picked the same way). */
function callerFacts(context: PolicyContext | undefined): CallerFacts | undefined {
  const caller = context && Object.hasOwn(context, 'caller') ? context.caller : undefined;
  if (!caller || !Object.hasOwn(caller, 'name') || typeof caller.name !== 'string') return undefined;
  const scopes = Object.hasOwn(caller, 'scopes') && Array.isArray(caller.scopes) ? caller.scopes : [];
  return { name: caller.name, scopes };
}

/** Whose "always" answers apply: the caller's own (none: calls without a caller), in one session. */
function grantsKey(caller: CallerFacts | undefined, context: PolicyContext | undefined): string {
  const sessionId = context && Object.hasOwn(context, 'sessionId') ? (context.sessionId ?? '') : '';
  return JSON.stringify([caller?.name ?? null, sessionId]);
}

function compileRule(rule: PolicyRuleConfig, list: Decision, id: string, origin: string): CompiledRule {
  // A `.` spans lines in deny and ask rules (a newline cannot split a command away from them) but
  // not in allow rules (an allowed first line cannot carry a second one): both fail closed.
  const flags = list === 'allow' ? '' : 's';
  // Rules read input in NFC (canonical-json.ts): text NFC would change (a decomposed é as a macOS
  // file name holds it, the Kelvin sign) can never be matched, and a deny rule would silently miss.
  const nfc = (text: string, at: string, what: string) => {
    if (text !== text.normalize('NFC')) {
      throw hostError('RH_ERR_CONFIG_INVALID', [
        origin,
        `  ${at}: the ${what} is not in Unicode NFC, and input is normalised to NFC before rules read it, so it could never match as written; write it in NFC: ${escapeNonAscii(text.normalize('NFC'))}`,
      ]);
    }
  };
  const compile = (pattern: string, key: string, anchored: boolean) => {
    const source = anchored ? `^(?:${pattern})$` : pattern;
    const at = `${id}.${key}`;
    nfc(pattern, at, 'pattern');
    try {
      return linearRegExp(source, flags, pattern);
    } catch (error) {
      const invalid = error instanceof SyntaxError ? 'invalid regular expression: ' : '';
      throw hostError('RH_ERR_CONFIG_INVALID', [origin, `  ${at}: ${invalid}${messageOf(error)}`]);
    }
  };
  const source: PolicyRule = Object.freeze({ ...rule, id, list });
  return {
    decision: decisionOf({
      decision: list,
      rule: source,
      ...(rule.reason === undefined ? {} : { reason: rule.reason }),
    }),
    // Both always set, if only to undefined: an absent one would be read from Object.prototype.
    match: rule.match === undefined ? undefined : compile(rule.match, 'match', false),
    where:
      rule.where === undefined
        ? undefined
        : Object.entries(rule.where).map(([field, pattern]): [string[], RegExp] => {
            nfc(field, `${id}.where.${field}`, 'field name');
            return [fieldPath(field), compile(pattern, `where.${field}`, true)];
          }),
    who: callerMatcher(rule.callers, rule.scopes),
  };
}

/**
 * Named callers and scopes: the caller must be one of `callers` and hold at least one of `scopes`
 * (each list checked only when given). Undefined when the rule names neither: it applies to all.
 */
function callerMatcher(
  callers: readonly string[] | undefined,
  scopes: readonly string[] | undefined,
): CompiledRule['who'] {
  if (callers === undefined && scopes === undefined) return undefined;
  const names = callers === undefined ? undefined : new Set(callers);
  return (caller) =>
    caller !== undefined &&
    (names === undefined || names.has(caller.name)) &&
    (scopes === undefined || scopes.some((scope) => caller.scopes.includes(scope)));
}

/** `"caf\u00e9"`: shows which code points NFC chose, where printing them would look unchanged. */
function escapeNonAscii(text: string): string {
  return JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A decision is read by the dispatcher, the audit trail and the approval prompt: one without a
 * `rule` or a `reason` must not find them on Object.prototype. Frozen: every call shares it.
 */
function decisionOf(fields: PolicyDecision): PolicyDecision {
  return Object.freeze(Object.assign(Object.create(null) as PolicyDecision, fields));
}

/**
 * Whether `readOnlyDefault`, not `default`, decides for this tool when no rule does. Own properties
 * only: an `annotations` or `readOnly` inherited from Object.prototype makes no tool read-only.
 */
function isReadOnly(tool: Pick<ToolInfo, 'annotations'>): boolean {
  const annotations = Object.hasOwn(tool, 'annotations') ? tool.annotations : undefined;
  return annotations !== undefined && Object.hasOwn(annotations, 'readOnly') && annotations.readOnly === true;
}

/** A `where` key: a top-level field name, or (starting with `/`) a JSON pointer into the input. */
function fieldPath(field: string): string[] {
  return field.startsWith('/') ? segments(field) : [field];
}

/** Each field must be present; a string is tested as is, any other value as its canonical JSON. */
function matchesWhere(where: [string[], RegExp][], input: unknown): boolean {
  for (const [path, re] of where) {
    const value = valueAt(input, path);
    if (value === undefined) return false;
    if (!re.test(typeof value === 'string' ? value : canonicalJson(value))) return false;
  }
  return true;
}

/** An exact name, or a glob: `*` is any run of characters, `?` one character; anchored at both ends. */
function toolMatcher(pattern: string): (name: string) => boolean {
  if (!/[*?]/.test(pattern)) return (name) => name === pattern;
  const re = linearRegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    's',
  );
  return (name) => re.test(name);
}
