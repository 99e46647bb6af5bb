import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { node22 } from '../scripts/node22.ts';
import { userCacheDir } from '../core/user-cache.ts';
import { ROOT, tempDir } from './helpers.ts';

/** Runs `body` with these environment variables set (undefined: unset), then puts them back. */
function withEnv<T>(env: Record<string, string | undefined>, body: () => T): T {
  const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
  apply(env);
  try {
    return body();
  } finally {
    apply(saved);
  }
}

describe("userCacheDir: the user's own cache, or none", () => {
  it('makes <root>/<name> readable by its owner only, under RH_CACHE_DIR', () => {
    const tmp = tempDir();
    try {
      const root = join(tmp.dir, 'root');
      const dir = withEnv({ RH_CACHE_DIR: root }, () => userCacheDir('ts'));
      expect(dir).to.equal(join(root, 'ts'));
      expect(statSync(root).mode & 0o777).to.equal(0o700);
      expect(statSync(dir!).mode & 0o777).to.equal(0o700);
      expect(withEnv({ RH_CACHE_DIR: 'false' }, () => userCacheDir('ts'))).to.equal(undefined);
    } finally {
      tmp.cleanup();
    }
  });

  it('trusts no folder others can write to, the root or the one in it, and no symlink', () => {
    const tmp = tempDir();
    try {
      const root = join(tmp.dir, 'root');
      withEnv({ RH_CACHE_DIR: root }, () => userCacheDir('ts'));
      chmodSync(join(root, 'ts'), 0o777);
      expect(withEnv({ RH_CACHE_DIR: root }, () => userCacheDir('ts'))).to.equal(undefined);
      chmodSync(join(root, 'ts'), 0o700);
      chmodSync(root, 0o775);
      expect(withEnv({ RH_CACHE_DIR: root }, () => userCacheDir('ts'))).to.equal(undefined);
      chmodSync(root, 0o700);
      expect(withEnv({ RH_CACHE_DIR: root }, () => userCacheDir('ts'))).to.equal(join(root, 'ts'));
      const link = join(tmp.dir, 'link');
      symlinkSync(root, link);
      expect(withEnv({ RH_CACHE_DIR: link }, () => userCacheDir('ts'))).to.equal(undefined);
    } finally {
      tmp.cleanup();
    }
  });

  it('defaults to $XDG_CACHE_HOME, or ~/.cache when it is unset or relative: never the workspace', () => {
    const tmp = tempDir();
    try {
      const xdg = join(tmp.dir, 'xdg');
      const home = join(tmp.dir, 'home');
      mkdirSync(home);
      const env = { RH_CACHE_DIR: undefined, HOME: home };
      expect(withEnv({ ...env, XDG_CACHE_HOME: xdg }, () => userCacheDir('ts'))).to.equal(
        join(xdg, 'rousseau-host', 'ts'),
      );
      expect(withEnv({ ...env, XDG_CACHE_HOME: 'relative/cache' }, () => userCacheDir('ts'))).to.equal(
        join(home, '.cache', 'rousseau-host', 'ts'),
      );
      expect(existsSync(join(process.cwd(), 'relative'))).to.equal(false);
    } finally {
      tmp.cleanup();
    }
  });
});

describe("the CLI's compile cache", () => {
  it("keeps V8's compiled code in the user's cache on Node 22, and nothing on Node 20", function () {
    this.timeout(120_000); // the first run may install node@22 from npm's cache
    const tmp = tempDir();
    try {
      const bin = join(ROOT, 'bin', 'rousseau-host.js');
      const run = (node: string, root: string, env: NodeJS.ProcessEnv = {}) => {
        const { status, stderr } = spawnSync(node, [bin, '--version'], {
          encoding: 'utf8',
          env: { ...process.env, NODE_COMPILE_CACHE: undefined, ...env, RH_CACHE_DIR: root },
        });
        expect(stderr).to.equal('');
        expect(status).to.equal(0);
      };
      const on22 = join(tmp.dir, 'on22');
      run(node22(), on22);
      // Node keeps a folder per version inside, with an entry per module compiled.
      const [version] = readdirSync(join(on22, 'v8'));
      expect(version).to.match(/^v22\./);
      expect(readdirSync(join(on22, 'v8', version!)).length).to.be.greaterThan(3);
      // A user's own NODE_COMPILE_CACHE stands: the host puts none of its own beside it.
      const theirs = join(tmp.dir, 'theirs');
      run(node22(), join(tmp.dir, 'unused'), { NODE_COMPILE_CACHE: theirs });
      expect(existsSync(join(tmp.dir, 'unused', 'v8'))).to.equal(false);
      expect(readdirSync(theirs)).to.have.length(1);
      // Node 20 has no compile cache: nothing is made.
      const on20 = join(tmp.dir, 'on20');
      run(process.execPath, on20);
      expect(existsSync(on20)).to.equal(false);
    } finally {
      tmp.cleanup();
    }
  });
});
