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
 * And nothing else may print into the question while it is open: `screen` is told when a prompt
 * opens and closes, and holds the rest of the output meanwhile (the REPL's display).
 */
import { createInterface } from 'node:readline/promises';
import type { Readable, Writable } from 'node:stream';
import type { ApproveFn } from '../dispatch.ts';
import type { PolicyDecision } from '../policy.ts';
import { terminalSafe } from '../terminal-text.ts';

/** What else writes to the terminal: quiet from `hold()` until `release()`. */
export interface Screen {
  hold(): void;
  release(): void;
}

/** The prompt on this process's terminal, or `undefined` when stdin or stderr is not one. */
export function terminalApprover(screen?: Screen): ApproveFn | undefined {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return undefined;
  return promptApprover(process.stdin, process.stderr, screen);
}

/**
 * Asks on `output`, reads the answer from `input`. Tool calls of one agent turn run concurrently:
 * their prompts are asked one after another, never interleaved.
 */
export function promptApprover(input: Readable, output: Writable, screen?: Screen): ApproveFn {
  let queue: Promise<unknown> = Promise.resolve();
  const ask = async (question: string): Promise<string> => {
    screen?.hold();
    const rl = createInterface({ input, output });
    try {
      return await new Promise<string>((resolve) => {
        // Ctrl-C at the prompt is a no, and then what it is everywhere else: an interrupt (the
        // REPL cancels the turn). readline would otherwise swallow it and leave the prompt open.
        rl.on('SIGINT', () => {
          resolve('');
          process.emit('SIGINT', 'SIGINT');
        });
        rl.on('close', () => resolve(''));
        rl.question(question).then(
          (text) => resolve(text.trim().toLowerCase()),
          () => resolve(''),
        );
      });
    } finally {
      rl.close();
      screen?.release();
    }
  };
  return ({ tool, input: canonical, decision }) => {
    const { rule } = decision;
    const asked = rule ? `rule ${rule.id}` : 'the default policy';
    // What the rule tests, so the person sees why this input, and not another, is asked about.
    const tests = rule && (rule.match !== undefined || rule.where !== undefined) ? describeRule(rule) : undefined;
    const question = terminalSafe(
      [
        `\n${tool.name} (plugin ${tool.plugin}) needs approval: ${asked}${decision.reason ? `, ${decision.reason}` : ''}.`,
        ...(tests ? [`  rule:  ${tests}`] : []),
        `  input: ${canonical}`,
        '[y]es / [n]o / [a]lways for this exact input in this session: ',
      ].join('\n'),
    );
    const answer = queue.then(() => ask(question));
    queue = answer.catch(() => undefined);
    return answer.then((text) => (text === 'a' || text === 'always' ? 'always' : text === 'y' || text === 'yes'));
  };
}

function describeRule(rule: NonNullable<PolicyDecision['rule']>): string {
  const parts = [`tool ${rule.tool}`];
  if (rule.match !== undefined) parts.push(`match ${JSON.stringify(rule.match)}`);
  if (rule.where !== undefined) parts.push(`where ${JSON.stringify(rule.where)}`);
  return parts.join(', ');
}
