// bin/rousseau-host.js: on Node 22 the CLI keeps V8's compiled code in Node's compile cache, in the
// user's own cache folder (core/user-cache.ts), unless the user says otherwise.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { join } from 'node:path';
import { expect } from 'chai';
import { node22 } from '../../scripts/node22.ts';
import { BIN, tempDirPerTest } from '../helpers.ts';

describe('bin/rousseau-host.js: the compile cache', function () {
  const tmp = tempDirPerTest();

  this.timeout(120_000); // the first run may install node@22 from npm's cache

  /** Runs `--version` with `node` and the host's cache folder at `root`. */
  function version(node: string, root: string, env: NodeJS.ProcessEnv = {}): void {
    const { status, stdout, stderr } = spawnSync(node, [BIN, '--version'], {
      encoding: 'utf8',
      env: { ...process.env, NODE_COMPILE_CACHE: undefined, ...env, RH_CACHE_DIR: root },
    });
    expect(stderr).to.equal('');
    expect(status).to.equal(0);
    expect(stdout.trim()).to.match(/^\d+\.\d+\.\d+/);
  }
  const entries = (dir: string) => (existsSync(dir) ? readdirSync(dir, { recursive: true, encoding: 'utf8' }) : []);

  it("keeps V8's compiled code in the user's cache folder on Node 22, one folder per Node version", () => {
    version(node22(), tmp.dir);
    const [folder, ...others] = readdirSync(join(tmp.dir, 'v8'));
    expect(others).to.deep.equal([]);
    expect(folder).to.match(/^v22\./);
    expect(entries(join(tmp.dir, 'v8', folder!)).length).to.be.greaterThan(3);
  });

  it("leaves the user's own choice standing: NODE_COMPILE_CACHE, NODE_DISABLE_COMPILE_CACHE, RH_CACHE_DIR=false", () => {
    const theirs = join(tmp.dir, 'theirs');
    version(node22(), join(tmp.dir, 'a'), { NODE_COMPILE_CACHE: theirs });
    expect(entries(join(tmp.dir, 'a', 'v8'))).to.deep.equal([]);
    expect(readdirSync(theirs)).to.have.length(1);
    version(node22(), join(tmp.dir, 'b'), { NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(entries(join(tmp.dir, 'b', 'v8'))).to.deep.equal([]);
    const tmpdir = join(tmp.dir, 'tmpdir');
    version(node22(), 'false', { TMPDIR: tmpdir });
    expect(entries(tmpdir)).to.deep.equal([]); // not Node's default place either
  });

  it('on the running Node: a cache where Node has one (22.1 and later), nothing where it has none (20)', () => {
    const root = join(tmp.dir, 'root');
    version(process.execPath, root);
    const hasCache = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function';
    expect(entries(join(root, 'v8')).length > 0).to.equal(hasCache);
    if (!hasCache) expect(existsSync(root)).to.equal(false);
  });
});
