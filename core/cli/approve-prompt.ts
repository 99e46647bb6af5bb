/**
 * The terminal's answer to a policy `ask`: shows the tool, the rule that asked and the canonical
 * input the tool will receive, and reads y(es) / n(o) / a(lways). "always" is returned as is: the
 * dispatcher stores it in the policy as an exact-input rule for this session (policy.ts), so it
 * never covers another input. Anything but a clear yes is a no.
 *
 * Without a terminal there is no approver: `ask` is then a denial unless `--yes`.
 *
 * Everything shown comes from a plugin or a model, and is escaped (terminal-text.ts): a bidi
 * override or a cursor move must not make the prompt show one input while the tool gets another.
 */
import { createInterface } from 'node:readline/promises';
import type { Readable, Writable } from 'node:stream';
import type { ApproveFn } from '../dispatch.ts';
import { terminalSafe } from '../terminal-text.ts';

/** The prompt on this process's terminal, or `undefined` when stdin or stderr is not one. */
export function terminalApprover(): ApproveFn | undefined {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return undefined;
  return promptApprover(process.stdin, process.stderr);
}

/**
 * Asks on `output`, reads the answer from `input`. Tool calls of one agent turn run concurrently:
 * their prompts are asked one after another, never interleaved.
 */
export function promptApprover(input: Readable, output: Writable): ApproveFn {
  let queue: Promise<unknown> = Promise.resolve();
  const ask = async (question: string): Promise<string> => {
    const rl = createInterface({ input, output });
    try {
      return (await rl.question(question)).trim().toLowerCase();
    } finally {
      rl.close();
    }
  };
  return ({ tool, input: canonical, decision }) => {
    const rule = decision.rule ? `rule ${decision.rule.id}` : 'the default policy';
    const question = terminalSafe(
      [
        `\n${tool.name} (plugin ${tool.plugin}) needs approval: ${rule}${decision.reason ? `, ${decision.reason}` : ''}.`,
        `  input: ${canonical}`,
        '[y]es / [n]o / [a]lways for this exact input in this session: ',
      ].join('\n'),
    );
    const answer = queue.then(() => ask(question));
    queue = answer.catch(() => undefined);
    return answer.then((text) => (text === 'a' || text === 'always' ? 'always' : text === 'y' || text === 'yes'));
  };
}
