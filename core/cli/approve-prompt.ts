/**
 * The terminal's answer to a policy `ask`: shows the tool, the rule that asked and the canonical
 * input the tool will receive, and reads y(es) / n(o) / a(lways). "always" is returned as is: the
 * dispatcher stores it in the policy as an exact-input rule for this session (policy.ts), so it
 * never covers another input. Anything but a clear yes is a no.
 *
 * Without a terminal there is no approver: `ask` is then a denial unless `--yes`.
 *
 * Everything shown comes from a plugin or a model, and is escaped (terminal-text.ts): a bidi
 * override or a cursor move must not make the prompt show one input while the tool gets another,
 * nor padding push its start off the screen (`approvalText`).
 * And nothing else may print into the question while it is open: `screen` is told when a prompt
 * opens and closes, and holds the rest of the output meanwhile (the REPL's display), and the log's
 * lines are held too (`holdLog`).
 */
import type { Readable, Writable } from 'node:stream';
import type { ApprovalRequest, ApproveFn } from '../types.ts';
import { holdLog, releaseLog } from '../log.ts';
import type { PolicyDecision } from '../policy.ts';
import { approvalText, terminalSafe } from '../terminal-text.ts';
import { thousands } from '../thousands.ts';

/** What else writes to the terminal: quiet from `hold()` until `release()`. */
export interface Screen {
  hold(): void;
  release(): void;
}

/** The prompt on this process's terminal, or `undefined` when stdin or stderr is not one. */
export function terminalApprover(screen?: Screen): ApproveFn | undefined {
  const prompt = terminalPrompt(screen);
  return prompt && approverOn(prompt);
}

/** Questions asked on this process's terminal (stdin, stderr), or `undefined` when either is not one. */
export function terminalPrompt(screen?: Screen): LinePrompt | undefined {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return undefined;
  return linePrompt(process.stdin, process.stderr, screen);
}

/** Asks on `output`, reads the answer from `input`. */
export function promptApprover(input: Readable, output: Writable, screen?: Screen): ApproveFn {
  return approverOn(linePrompt(input, output, screen));
}

/**
 * One line read after a question: the text typed, `null` for Ctrl-C, `undefined` when the input
 * ended (Ctrl-D).
 */
export type Ask = (question: string) => Promise<string | null | undefined>;

/** Dialogs on a terminal: approvals and forms (elicit-prompt.ts) share one, so they never interleave. */
export interface LinePrompt {
  /**
   * Runs `dialog` once no other is open; the rest of the output is held until it ends. `say` writes
   * a line. When `signal` aborts, the question open then ends as if the input had.
   */
  open<T>(dialog: (ask: Ask, say: (line: string) => void) => Promise<T>, signal?: AbortSignal): Promise<T>;
}

/**
 * Tool calls of one agent turn run concurrently: their dialogs are opened one after another, never
 * interleaved.
 */
export function linePrompt(input: Readable, output: Writable, screen?: Screen): LinePrompt {
  let queue: Promise<unknown> = Promise.resolve();
  const ask = async (question: string, signal?: AbortSignal) => {
    // Taken at the first question, not imported: a `call` run without a terminal never asks one.
    const rl = process.getBuiltinModule('node:readline/promises').createInterface({ input, output });
    try {
      return await new Promise<string | null | undefined>((resolve) => {
        // readline would otherwise swallow Ctrl-C and leave the question open.
        rl.on('SIGINT', () => resolve(null));
        rl.on('close', () => resolve(undefined));
        rl.question(question, signal ? { signal } : {}).then(
          (text) => resolve(text.trim()),
          () => resolve(undefined),
        );
      });
    } finally {
      rl.close();
    }
  };
  return {
    open(dialog, signal) {
      const run = queue.then(async () => {
        screen?.hold();
        holdLog();
        try {
          return await dialog(
            (question) => ask(question, signal),
            (line) => output.write(`${line}\n`),
          );
        } finally {
          releaseLog();
          screen?.release();
        }
      });
      queue = run.catch(() => undefined);
      return run;
    },
  };
}

/** The policy's `ask` as a y(es) / n(o) / a(lways) question. */
export function approverOn(prompt: LinePrompt): ApproveFn {
  const approve = ({ tool, input: canonical, decision }: ApprovalRequest) => {
    const { rule } = decision;
    const asked = rule ? `rule ${rule.id}` : 'the default policy';
    // What the rule tests, so the person sees why this input, and not another, is asked about.
    const tests = rule && (rule.match !== undefined || rule.where !== undefined) ? describeRule(rule) : undefined;
    const shown = approvalText(canonical);
    // The tool is named again beside the question: a long input puts the first line far above it.
    const sizeNote = shown === canonical ? '' : `, input of ${thousands(canonical.length)} characters`;
    const question = terminalSafe(
      [
        `\n${tool.name} (plugin ${tool.plugin}) needs approval: ${asked}${decision.reason ? `, ${decision.reason}` : ''}.`,
        ...(tests ? [`  rule:  ${tests}`] : []),
        `  input: ${shown}`,
        `${tool.name}${sizeNote}: [y]es / [n]o / [a]lways for this exact input in this session: `,
      ].join('\n'),
    );
    return prompt.open(async (ask) => {
      const text = await ask(question);
      // Ctrl-C at the prompt is a no, and then what it is everywhere else: an interrupt (the REPL cancels the turn).
      if (text === null) process.emit('SIGINT', 'SIGINT');
      const answer = text?.toLowerCase();
      return answer === 'a' || answer === 'always' ? 'always' : answer === 'y' || answer === 'yes';
    });
  };
  return Object.assign(approve, { answeredBy: 'terminal' });
}

function describeRule(rule: NonNullable<PolicyDecision['rule']>): string {
  const parts = [`tool ${rule.tool}`];
  if (rule.match !== undefined) parts.push(`match ${JSON.stringify(rule.match)}`);
  if (rule.where !== undefined) parts.push(`where ${JSON.stringify(rule.where)}`);
  return parts.join(', ');
}
