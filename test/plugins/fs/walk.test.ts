import { expect } from 'chai';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_WALK_ENTRIES, walk, type WalkEntry, type WalkState } from '../../../plugins/fs/walk.ts';
import { tempDir } from '../../helpers.ts';

async function collect(
  dir: string,
  root: string,
  state?: WalkState,
  signal = new AbortController().signal,
): Promise<WalkEntry[]> {
  const entries: WalkEntry[] = [];
  for await (const entry of walk(dir, root, signal, state)) entries.push(entry);
  return entries;
}

const rels = (entries: WalkEntry[]) => entries.map((e) => e.rel);

describe('plugins/fs/walk', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir()));
  afterEach(() => t.cleanup());

  it("lists a directory's entries in byte order, then enters its subdirectories in that order", async () => {
    for (const file of ['b/2.txt', 'b/1.txt', 'B.txt', 'a/z/deep.txt', 'a.txt', 'c.txt']) t.write(file, '');
    expect(rels(await collect(t.dir, t.dir))).to.deep.equal([
      'B.txt', // upper case sorts before lower case in bytes
      'a',
      'a.txt',
      'b',
      'c.txt',
      'a/z',
      'a/z/deep.txt',
      'b/1.txt',
      'b/2.txt',
    ]);
  });

  it('yields symlinks as entries but never follows them: a link to its own parent ends, one outside stays unread', async () => {
    const outside = tempDir();
    try {
      outside.write('secret.txt', '');
      t.write('sub/file.txt', '');
      symlinkSync(t.dir, join(t.dir, 'sub', 'loop'));
      symlinkSync(outside.dir, join(t.dir, 'out'));
      const entries = await collect(t.dir, t.dir);
      expect(rels(entries)).to.deep.equal(['out', 'sub', 'sub/file.txt', 'sub/loop']);
      const links = entries.filter((e) => e.dirent.isSymbolicLink()).map((e) => e.rel);
      expect(links).to.deep.equal(['out', 'sub/loop']);
    } finally {
      outside.cleanup();
    }
  });

  it('lists .git, node_modules and .rousseau but does not enter them, at any depth', async () => {
    for (const dir of ['.git', 'node_modules', '.rousseau', 'pkg/node_modules', 'pkg/.git'])
      t.write(join(dir, 'inside.txt'), '');
    t.write('.github/ci.yml', '');
    expect(rels(await collect(t.dir, t.dir))).to.deep.equal([
      '.git',
      '.github',
      '.rousseau',
      'node_modules',
      'pkg',
      '.github/ci.yml',
      'pkg/.git',
      'pkg/node_modules',
    ]);
  });

  it('stops after MAX_WALK_ENTRIES entries, counting across calls that share a state, and says it was cut', async () => {
    for (const file of ['a', 'b', 'c']) t.write(file, '');
    const exact: WalkState = { visited: MAX_WALK_ENTRIES - 3, truncated: false };
    expect(rels(await collect(t.dir, t.dir, exact))).to.deep.equal(['a', 'b', 'c']);
    expect(exact).to.deep.equal({ visited: MAX_WALK_ENTRIES, truncated: false });

    const over: WalkState = { visited: MAX_WALK_ENTRIES - 2, truncated: false };
    expect(rels(await collect(t.dir, t.dir, over))).to.deep.equal(['a', 'b']);
    expect(over.truncated).to.equal(true);
  });

  it('keeps a name that is not UTF-8 as its bytes, and marks the entries shown escaped, its children included', async () => {
    const name = Buffer.from([0x6e, 0xff, 0x78]); // "n", a byte no UTF-8 text has, "x"
    const dir = Buffer.concat([Buffer.from(`${t.dir}/`), name]);
    mkdirSync(dir);
    writeFileSync(Buffer.concat([dir, Buffer.from('/child.txt')]), '');
    t.write('plain.txt', '');
    const entries = await collect(t.dir, t.dir);
    const odd = entries.filter((e) => e.escaped);
    expect(odd).to.have.length(2);
    expect(odd[0]!.path.equals(dir)).to.equal(true);
    expect(odd[0]!.rel).to.not.equal(name.toString('utf8')); // never the lossy decoding with U+FFFD
    expect(odd[1]!.rel.startsWith(`${odd[0]!.rel}/`)).to.equal(true);
    expect(entries.find((e) => e.rel === 'plain.txt')!.escaped).to.equal(false);
  });

  it('walks a subdirectory with paths relative to it, and passes over a start that is not a directory', async () => {
    t.write('sub/inner/x.txt', '');
    expect(rels(await collect(join(t.dir, 'sub'), t.dir))).to.deep.equal(['inner', 'inner/x.txt']);
    expect(await collect(join(t.dir, 'sub', 'inner', 'x.txt'), t.dir)).to.deep.equal([]);
    expect(await collect(join(t.dir, 'missing'), t.dir)).to.deep.equal([]);
  });

  it('stops with the abort reason once its signal aborts', async () => {
    t.write('a/x.txt', '');
    const controller = new AbortController();
    const seen: string[] = [];
    const reason = new Error('stop here');
    let thrown: unknown;
    try {
      for await (const entry of walk(t.dir, t.dir, controller.signal)) {
        seen.push(entry.rel);
        controller.abort(reason);
      }
    } catch (error) {
      thrown = error;
    }
    expect(thrown).to.equal(reason);
    expect(seen).to.deep.equal(['a']);
  });
});
