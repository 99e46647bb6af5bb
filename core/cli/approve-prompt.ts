/**
 * The terminal's answer to a policy `ask`: shows the tool and the canonical input it will receive,
 * and reads y(es) / n(o) / a(lways for this exact input, this session) on stderr/stdin. Returns
 * `undefined` when there is no terminal: then `ask` is a denial unless `--yes`.
 */
import { createInterface } from 'node:readline/promises';
import type { ApproveFn } from '../dispatch.ts';

export function terminalApprover(): ApproveFn | undefined {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return undefined;
  const always = new Set<string>();
  return async ({ tool, input, decision }) => {
    const key = `${tool.name}\u0000${input}`;
    if (always.has(key)) return true;
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      const why = decision.reason ? ` (${decision.reason})` : '';
      const answer = (await rl.question(`\nApprove ${tool.name}${why}?\n  ${input}\n[y]es / [n]o / [a]lways for this input: `)).trim().toLowerCase();
      if (answer === 'a' || answer === 'always') {
        always.add(key);
        return 'always';
      }
      return answer === 'y' || answer === 'yes';
    } finally {
      rl.close();
    }
  };
}
