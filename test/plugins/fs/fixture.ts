// A workspace beside the things it must not reach: a sibling sharing its name as a prefix
// (ROOT-evil), an outside directory, and symlinks out of it in every position.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../helpers.ts';

export interface Layout {
  base: string;
  root: string;
  outside: string;
  evil: string;
  /** Everything under base/outside and base/ROOT-evil, to show nothing was created there. */
  outsideListing(): string[];
  cleanup(): void;
}

export function makeWorkspace(): Layout {
  const tmp = tempDir('rh-fs-');
  const base = tmp.dir;
  const root = join(base, 'ROOT');
  const outside = join(base, 'outside');
  const evil = join(base, 'ROOT-evil');
  for (const dir of [root, outside, evil, join(root, 'sub'), join(root, '.git')]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(outside, 'secret.txt'), 'outside secret\n');
  writeFileSync(join(evil, 'x.txt'), 'evil twin\n');
  writeFileSync(join(root, 'a.txt'), 'alpha\nbeta\ngamma\n');
  writeFileSync(join(root, 'sub', 'b.txt'), 'inside b\n');
  writeFileSync(join(root, '.git', 'config'), '[core]\n');
  symlinkSync('../outside/secret.txt', join(root, 'link-out'));
  symlinkSync('../outside', join(root, 'dir-out'));
  symlinkSync('../outside/created.txt', join(root, 'dangling'));
  symlinkSync('../outside/no-such-dir', join(root, 'dangling-dir'));
  symlinkSync('a.txt', join(root, 'link-in'));
  symlinkSync('sub', join(root, 'sub-link'));
  const listing = () =>
    [outside, evil].flatMap((d) => readdirSync(d, { recursive: true }).map((f) => join(d, String(f)))).sort();
  return { base, root, outside, evil, outsideListing: listing, cleanup: tmp.cleanup };
}

/**
 * A child process that keeps swapping `count` entries `f0`… in `dir` between a real one (a file, or a
 * directory holding `inner.txt`) and a symlink to `target`, as a hostile process in the workspace
 * would race a tool between its check and its open. `ready` once they all exist; `stop()` ends it.
 */
export function startSwapping(
  dir: string,
  target: string,
  kind: 'file' | 'dir',
  count = 20,
): { ready: Promise<void>; stop(): Promise<void> } {
  const script = `
    const fs = require('node:fs');
    const [dir, target, kind, count] = process.argv.slice(1);
    const real = (p) => (kind === 'dir' ? (fs.mkdirSync(p), fs.writeFileSync(p + '/inner.txt', 'inside\\n')) : fs.writeFileSync(p, 'inside\\n'));
    for (let i = 0; i < count; i++) real(dir + '/f' + i);
    process.send('ready');
    for (const end = Date.now() + 60000; Date.now() < end; ) {
      for (let i = 0; i < count; i++) {
        const p = dir + '/f' + i;
        fs.rmSync(p, { recursive: true, force: true });
        fs.symlinkSync(target, p);
        fs.rmSync(p);
        real(p);
      }
    }`;
  const child = spawn(process.execPath, ['-e', script, dir, target, kind, String(count)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = new Promise<void>((resolve) => child.once('message', () => resolve()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    ready,
    async stop() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
