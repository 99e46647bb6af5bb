// A tool's ctx.elicit in the REPL: the built CLI on a pseudo-terminal (terminal.ts) asks the form
// field by field (choices numbered, booleans y/n, defaults shown), says why an answer does not fit
// and asks again; Ctrl-C cancels the form without cancelling the turn. The tool's answer is read
// back from the saved session.
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, tempDir } from '../helpers.ts';
import { NO_KEYS } from './shared.ts';
import { openTerminal, type Terminal } from './terminal.ts';

const FORM = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Your name' },
    size: {
      type: 'string',
      oneOf: [
        { const: 's', title: 'Small' },
        { const: 'l', title: 'Large' },
      ],
    },
    hot: { type: 'boolean', default: true },
    cups: { type: 'integer', minimum: 1, maximum: 4 },
  },
  required: ['name', 'size'],
};

function workspace() {
  const tmp = tempDir();
  tmp.write(
    'rousseau.config.json',
    JSON.stringify({
      builtins: false,
      plugins: [join(FIXTURES, 'plugins', 'asking.ts')],
      policy: { default: 'allow' },
      log: { audit: false },
    }),
  );
  const call = { name: 'ask_user', input: { message: 'Your \u202eorder?', form: FORM } };
  const script = tmp.write(
    'script.json',
    JSON.stringify({ turns: [{ toolCalls: [call] }, { text: 'Ordered.' }, { toolCalls: [call] }, { text: 'Again.' }] }),
  );
  return { tmp, script };
}

/** The tool results saved in the session, in order. */
function savedResults(dir: string): string[] {
  const sessions = join(dir, '.rousseau', 'sessions');
  return readFileSync(join(sessions, readdirSync(sessions)[0]!), 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line))
    .filter((r) => r.type === 'message' && r.message.role === 'tool')
    .map((r) => r.message.results[0].content);
}

describe('ctx.elicit in the REPL (a form on the terminal)', function () {
  this.timeout(40_000);
  let term: Terminal | undefined;
  afterEach(() => term?.close());

  it('asks field by field, re-asks an answer that does not fit, and gives the tool the accepted values; Ctrl-C cancels', async () => {
    const { tmp, script } = workspace();
    try {
      term = openTerminal(['start', '--replay', script], { cwd: tmp.dir, env: { ...NO_KEYS, NO_COLOR: '1' } });
      await term.waitFor(/you> /);
      term.type('order');
      term.press('Enter');
      await term.waitFor(/Your name: $/m);
      expect(term.screen()).to.contain('ask_user asks: Your \\u202eorder?');
      term.type('Ada');
      term.press('Enter');
      await term.waitFor(/size \[1-2\]: $/m);
      expect(term.screen()).to.match(/ {4}1\) Small\n {4}2\) Large/);
      term.type('3');
      term.press('Enter');
      await term.waitFor(/that answer is not one of s, l/);
      term.type('2');
      term.press('Enter');
      await term.waitFor(/hot \[y\/n\] \(optional\) \[y\]: $/m);
      term.press('Enter'); // the default
      await term.waitFor(/cups \(optional\): $/m);
      term.type('2');
      term.press('Enter');
      await term.waitFor(/Send these answers\? \[y\]es \/ \[n\]o: $/m);
      term.type('y');
      term.press('Enter');
      await term.waitFor(/Ordered\./);

      term.type('again');
      term.press('Enter');
      await term.waitFor(/Your name: $/m);
      term.press('C-c');
      await term.waitFor(/Again\./);
      term.press('C-d');
      expect(await term.exited()).to.equal(0);
      expect(savedResults(tmp.dir).map((r) => JSON.parse(r))).to.deep.equal([
        { action: 'accept', content: { name: 'Ada', size: 'l', hot: true, cups: 2 } },
        { action: 'cancel' },
      ]);
    } finally {
      tmp.cleanup();
    }
  });
});
