// A workspace beside the things it must not reach: a sibling sharing its name as a prefix
// (ROOT-evil), an outside directory, and symlinks out of it in every position.
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
