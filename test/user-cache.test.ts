import { chmodSync, existsSync, mkdirSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { userCacheDir } from '../core/user-cache.ts';
import { tempDirPerTest } from './helpers.ts';

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
  const tmp = tempDirPerTest();

  it('makes <root>/<name> readable by its owner only, under RH_CACHE_DIR', () => {
    const root = join(tmp.dir, 'root');
    const dir = withEnv({ RH_CACHE_DIR: root }, () => userCacheDir('ts'));
    expect(dir).to.equal(join(root, 'ts'));
    expect(statSync(root).mode & 0o777).to.equal(0o700);
    expect(statSync(dir!).mode & 0o777).to.equal(0o700);
    expect(withEnv({ RH_CACHE_DIR: 'false' }, () => userCacheDir('ts'))).to.equal(undefined);
  });

  it('trusts no folder others can write to, the root or the one in it, and no symlink', () => {
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
  });

  it('defaults to $XDG_CACHE_HOME, or ~/.cache when it is unset or relative: never the workspace', () => {
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
    // No home, and a relative temp dir: the fallback would be a folder of the workspace.
    expect(
      withEnv({ RH_CACHE_DIR: undefined, XDG_CACHE_HOME: undefined, HOME: '', TMPDIR: '.' }, () => userCacheDir('ts')),
    ).to.equal(undefined);
    expect(withEnv({ RH_CACHE_DIR: 'relative/cache' }, () => userCacheDir('ts'))).to.equal(undefined);
    expect(existsSync(join(process.cwd(), 'relative'))).to.equal(false);
  });
});
