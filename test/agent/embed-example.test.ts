// examples/embed-agent runs as users run it: a script importing the built package.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../helpers.ts';

describe('examples/embed-agent', function () {
  this.timeout(30_000);
  it('creates a host, runs the agent offline (replay) with a real read call, and exits 0', async () => {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'examples', 'embed-agent', 'index.ts')],
      {
        cwd: ROOT,
        env: { ...process.env, ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', OPENAI_BASE_URL: '', NO_COLOR: '1' },
      },
    );
    expect(stdout).to.equal('README.md introduces rousseau-host: a host that loads LLM tools as plugins.\n');
    expect(stderr).to.match(/✓ read \(\d+ ms\)/);
    expect(stderr).to.contain('[end_turn, 2 turns');
  });
});
