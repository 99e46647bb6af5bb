/**
 * `rousseau-host policy check TOOL JSON`: what the policy decides for a call, without running it.
 * The input goes through the call pipeline's own steps first (strict parse, schema defaults,
 * validation, canonical form), so the answer is the one a real call would get.
 */
import { EXIT, hostFromFlags, print, printError, printJson, readStdin, UsageError, type Command } from './command.ts';

export const policy: Command = {
  name: 'policy',
  summary:
    'Show the policy decision for a call (allow / ask / deny), the rule that made it and the canonical input, without running it. Exit 0 whatever the decision; 1 when the tool is unknown or the input is invalid.',
  usage: 'policy check TOOL [JSON | -] [--json]',
  options: {},
  async run({ values, positionals, stop }) {
    const [sub, tool, inputArg, ...rest] = positionals;
    if (sub !== 'check')
      throw new UsageError(
        sub ? `unknown policy subcommand "${sub}"; the only one is "check"` : 'policy needs a subcommand: check',
      );
    if (!tool || rest.length)
      throw new UsageError('policy check takes a TOOL name and at most one JSON input (or - to read it from stdin)');
    const input = inputArg === '-' ? await readStdin(stop.signal) : (inputArg ?? '{}');
    const host = await hostFromFlags(values, { audit: false });
    const check = host.decide(tool, input);
    await host.close();

    if (!check.ok) {
      printError(`rousseau-host policy check: ${check.content}`);
      if (values.json) printJson({ error: { code: check.code, message: check.content } });
      return EXIT.failure;
    }
    const { decision, rule, reason, canonical } = check;
    if (values.json) {
      printJson({ decision, ...(rule ? { rule } : {}), ...(reason ? { reason } : {}), canonical });
    } else {
      const by = rule ? `rule ${rule.id}` : 'the default policy';
      print(`${decision}  (${by}${reason ? `: ${reason}` : ''})\ncanonical input: ${canonical}`);
    }
    return EXIT.ok;
  },
};
