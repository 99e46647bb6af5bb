// The logger in a child process of its own: what reaches stderr is what a user sees.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { ROOT } from './helpers.ts';

function stderrOf(code: string): string {
  const script = `import { createLogger } from './core/log.ts';\n${code}`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1' },
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).to.equal(0);
  return r.stderr;
}

describe('createLogger', function () {
  this.timeout(20_000);

  it('for people (a terminal), shows control and bidi characters from a plugin as \\uXXXX', () => {
    const out = stderrOf(
      `createLogger({ json: false }).child({ plugin: 'p\\u202e' }).warn('clear \\u001b[2J\\r now \\u2066x', { k: '\\u0085' });`,
    );
    expect(out).to.contain('warn [p\\u202e] clear \\u001b[2J\\u000d now \\u2066x {"k":"\\u0085"}');
    expect(out).to.not.match(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
  });
});
