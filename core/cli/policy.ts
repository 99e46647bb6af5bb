/**
 * `rousseau-host policy check TOOL JSON`: what the policy decides for a call, without running it.
 * The input goes through the call pipeline's own steps first (strict parse, schema defaults,
 * validation, canonical form), so the answer is the one a real call would get. `--caller` and
 * `--scope` make it a call from that caller, for rules that name callers and scopes.
 */
import type { Caller } from '../types.ts';
import {
  EXIT,
  hostFromFlags,
  print,
  printError,
  printJson,
  readStdinInput,
  UsageError,
  type Command,
  type Values,
} from './command.ts';

export const policy: Command = {
  name: 'policy',
  summary:
    'Show the policy decision for a call (allow / ask / deny), the rule that made it and the canonical input, without running it. Exit 0 whatever the decision; 1 when the tool is unknown or the input is invalid.',
  usage: 'policy check TOOL [JSON | -] [--caller NAME [--scope SCOPE]...] [--json]',
  options: { caller: { type: 'string' }, scope: { type: 'string', multiple: true } },
  async run({ values, positionals, stop }) {
    const [sub, tool, inputArg, ...rest] = positionals;
    if (sub !== 'check')
      throw new UsageError(
        sub ? `unknown policy subcommand "${sub}"; the only one is "check"` : 'policy needs a subcommand: check',
      );
    if (!tool || rest.length)
      throw new UsageError('policy check takes a TOOL name and at most one JSON input (or - to read it from stdin)');
    const flagged = callerFromFlags(values);
    const host = await hostFromFlags(values, { audit: false });
    // A token's requests carry the scopes the config gives it: without --scope, the check is made
    // with them, as the server decides that token's calls (an OAuth caller's come with its token).
    const token =
      flagged && values.scope === undefined
        ? host.config.serve?.auth?.tokens?.find((t) => t.name === flagged.name && t.scopes?.length)
        : undefined;
    const caller = flagged && token?.scopes ? { ...flagged, scopes: [...token.scopes] } : flagged;
    const input = inputArg === '-' ? await readStdinInput(host, stop.signal) : (inputArg ?? '{}');
    const info = host.tools().find((t) => t.name === tool);
    // A tool hidden from the caller is unknown to their calls, but whoever tests the rules asked what
    // the policy decides and which rule hides it: the input is checked as anyone's would be, and the
    // policy then decides for this caller (a deny, since nothing lets them call it).
    const hidden = caller !== undefined && info !== undefined && !host.policy.canEverCall(info, caller);
    const checked = host.decide(tool, input, caller && !hidden ? { caller } : {});
    const check =
      hidden && checked.ok
        ? {
            ok: true as const,
            ...host.policy.decide(info, () => checked.canonical, JSON.parse(checked.canonical), { caller }),
            canonical: checked.canonical,
          }
        : checked;
    await host.close();

    if (!check.ok) {
      printError(`rousseau-host policy check: ${check.content}`);
      if (values.json) printJson({ error: { code: check.code, message: check.content } });
      return EXIT.failure;
    }
    // Which default decided, when no rule did: with `default: 'deny'`, "allow (the default policy)"
    // for a read-only tool read as a contradiction.
    const { decision, rule, default: byDefault, reason, canonical } = check;
    if (values.json) {
      printJson({
        decision,
        ...(rule ? { rule } : { default: byDefault }),
        ...(reason ? { reason } : {}),
        ...(hidden ? { hidden: true } : {}),
        ...(token ? { tokenScopes: caller?.scopes } : {}),
        canonical,
      });
    } else {
      const by = rule
        ? `rule ${rule.id}`
        : byDefault === 'readOnlyDefault'
          ? 'no rule matched: policy.readOnlyDefault, as the tool is annotated readOnly'
          : 'no rule matched: policy.default';
      const unseen = hidden
        ? `\nhidden from caller "${caller.name}": their tools/list leaves ${tool} out, and their call to it answers unknown_tool`
        : '';
      const scopes = token ? `\nscopes of token "${token.name}" (serve.auth.tokens): ${caller?.scopes.join(', ')}` : '';
      print(`${decision}  (${by}${reason ? `: ${reason}` : ''})${unseen}${scopes}\ncanonical input: ${canonical}`);
    }
    return EXIT.ok;
  },
};

/** `--caller NAME --scope S…` as the caller an authenticated request would carry. */
function callerFromFlags(values: Values): Caller | undefined {
  const scopes = (values.scope ?? []) as string[];
  if (typeof values.caller !== 'string') {
    if (scopes.length) throw new UsageError('--scope needs --caller: scopes belong to a caller');
    return undefined;
  }
  if (values.caller === '' || scopes.includes('')) throw new UsageError('--caller and --scope need a non-empty value');
  return { name: values.caller, scopes, via: 'token' };
}
