// bin/rousseau-host.js on Node 22: the CLI keeps V8's compiled code in Node's compile cache, in
// Node's own place under the temp directory, unless NODE_DISABLE_COMPILE_CACHE is set.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { node22 } from '../../scripts/node22.ts';
import { BIN, tempDir } from '../helpers.ts';

/** The files `rousseau-host --version` left in the compile cache of a temp directory of its own. */
function cachedAfterVersion(env: NodeJS.ProcessEnv): string[] {
  const tmp = tempDir();
  try {
    const { NODE_COMPILE_CACHE: _, ...rest } = process.env;
    const printed = execFileSync(node22(), [BIN, '--version'], { env: { ...rest, TMPDIR: tmp.dir, ...env } });
    expect(printed.toString().trim()).to.match(/^\d+\.\d+\.\d+/);
    const cache = join(tmp.dir, 'node-compile-cache');
    return existsSync(cache) ? readdirSync(cache, { recursive: true, encoding: 'utf8' }) : [];
  } finally {
    tmp.cleanup();
  }
}

describe('bin/rousseau-host.js', function () {
  this.timeout(120_000); // the first run may install node@22 from npm's cache

  it("keeps the code it compiled in Node's compile cache on Node 22; NODE_DISABLE_COMPILE_CACHE=1 turns that off", () => {
    expect(cachedAfterVersion({})).to.not.be.empty;
    expect(cachedAfterVersion({ NODE_DISABLE_COMPILE_CACHE: '1' })).to.deep.equal([]);
  });
});
