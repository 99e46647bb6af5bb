// The logger as it writes to stderr: what reaches stderr is what a user sees.
import { expect } from 'chai';
import { createLogger } from '../core/log.ts';
import { capturingStderr, until } from './helpers.ts';

/** What `log` has the logger write to this process's stderr: winston passes a line on through its streams, after the call. */
async function stderrOf(log: () => void): Promise<string> {
  const { stderr } = await capturingStderr(async (captured) => {
    // Not the colours of a terminal the tests may run on: the logger picks them at its first line.
    const noColor = process.env.NO_COLOR;
    process.env.NO_COLOR = '1';
    try {
      log();
    } finally {
      if (noColor === undefined) delete process.env.NO_COLOR;
      else process.env.NO_COLOR = noColor;
    }
    await until(() => captured().endsWith('\n'), { message: () => `a whole line on stderr (so far: ${captured()})` });
  });
  return stderr;
}

describe('createLogger', () => {
  it('for people (a terminal), shows control and bidi characters from a plugin as \\uXXXX', async () => {
    const out = await stderrOf(() =>
      createLogger({ json: false }).child({ plugin: 'p\u202e' }).warn('clear \u001b[2J\r now \u2066x', { k: '\u0085' }),
    );
    expect(out).to.contain('warn [p\\u202e] clear \\u001b[2J\\u000d now \\u2066x {"k":"\\u0085"}');
    expect(out).to.not.match(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
  });
});
