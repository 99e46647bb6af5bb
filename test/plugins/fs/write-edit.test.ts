import { expect } from 'chai';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadPluginModule } from '../load.ts';
import { textOf, toolContext } from '../tool-context.ts';
import { makeWorkspace, type Layout } from './fixture.ts';

describe('plugins/fs write and edit', () => {
  let editTool: typeof import('../../../plugins/fs/edit.ts').editTool;
  let writeTool: typeof import('../../../plugins/fs/write.ts').writeTool;
  before(async () => {
    ({ editTool } = await loadPluginModule<typeof import('../../../plugins/fs/edit.ts')>('plugins/fs/edit.ts'));
    ({ writeTool } = await loadPluginModule<typeof import('../../../plugins/fs/write.ts')>('plugins/fs/write.ts'));
  });
  let ws: Layout;
  beforeEach(() => (ws = makeWorkspace()));
  afterEach(() => {
    // No temporary file is ever left behind, on success or on failure.
    const leftovers = readdirSync(ws.root, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.tmp'));
    expect(leftovers).to.deep.equal([]);
    ws.cleanup();
  });

  const write = (path: string, content: string) => writeTool.execute({ path, content }, toolContext(ws.root));
  const edit = (input: { path: string; old_string: string; new_string: string; replace_all?: boolean }) =>
    editTool.execute(input, toolContext(ws.root));
  const failure = (p: unknown) =>
    Promise.resolve(p).then(
      () => expect.fail('expected a failure'),
      (e: Error & { code?: string }) => e,
    );
  const file = (rel: string) => join(ws.root, rel);

  describe('write', () => {
    it('creates a file and its parent directories, and reports what it did', async () => {
      const out = (await write('new/deep/f.txt', 'one\ntwo\n')) as { content: string; data: unknown };
      expect(out.content).to.equal('created new/deep/f.txt: 8 bytes, 2 lines');
      expect(out.data).to.deep.equal({ path: 'new/deep/f.txt', bytes: 8, created: true });
      expect(readFileSync(file('new/deep/f.txt'), 'utf8')).to.equal('one\ntwo\n');
    });

    it('replaces a file atomically (a new inode), keeping its mode', async () => {
      chmodSync(file('a.txt'), 0o640);
      const inode = statSync(file('a.txt')).ino;
      expect(textOf(await write('a.txt', 'x'))).to.equal('replaced a.txt: 1 byte, 1 line (was 17 bytes)');
      const after = statSync(file('a.txt'));
      expect(after.mode & 0o7777).to.equal(0o640);
      expect(after.ino).to.not.equal(inode);
      expect(readFileSync(file('a.txt'), 'utf8')).to.equal('x');
    });

    it('refuses to replace a directory, and to write below a file', async () => {
      expect((await failure(write('sub', 'x'))).code).to.equal('not_a_file');
      expect((await failure(write('a.txt/child', 'x'))).code).to.equal('not_a_directory');
      expect(readFileSync(file('a.txt'), 'utf8')).to.equal('alpha\nbeta\ngamma\n');
    });
  });

  describe('edit', () => {
    it('replaces one unique occurrence and reports where', async () => {
      const out = (await edit({ path: 'a.txt', old_string: 'beta', new_string: 'BETA\nBETA2' })) as {
        content: string;
        data: unknown;
      };
      expect(out.content).to.equal('edited a.txt: 1 replacement at line 2 (1 line → 2 lines), now 23 bytes');
      expect(readFileSync(file('a.txt'), 'utf8')).to.equal('alpha\nBETA\nBETA2\ngamma\n');
    });

    it('keeps an executable mode', async () => {
      writeFileSync(file('run.sh'), '#!/bin/sh\necho hi\n');
      chmodSync(file('run.sh'), 0o755);
      await edit({ path: 'run.sh', old_string: 'hi', new_string: 'hello' });
      expect(statSync(file('run.sh')).mode & 0o7777).to.equal(0o755);
    });

    it('replaces every occurrence with replace_all', async () => {
      writeFileSync(file('r.txt'), 'a-a-a');
      expect(textOf(await edit({ path: 'r.txt', old_string: 'a', new_string: 'b', replace_all: true }))).to.match(
        /^edited r\.txt: 3 replacements, first at line 1/,
      );
      expect(readFileSync(file('r.txt'), 'utf8')).to.equal('b-b-b');
    });

    it('treats $ in the replacement literally', async () => {
      await edit({ path: 'a.txt', old_string: 'beta', new_string: "$& $' $1" });
      expect(readFileSync(file('a.txt'), 'utf8')).to.equal("alpha\n$& $' $1\ngamma\n");
    });

    it('leaves the file untouched on every error', async () => {
      writeFileSync(file('twice.txt'), 'x = 1\nx = 1\n');
      writeFileSync(file('bin.dat'), Buffer.from([1, 0, 2]));
      const cases: [Parameters<typeof edit>[0], string][] = [
        [{ path: 'twice.txt', old_string: 'x = 1', new_string: 'x = 2' }, 'not_unique'],
        [{ path: 'twice.txt', old_string: 'y', new_string: 'z' }, 'no_match'],
        [{ path: 'twice.txt', old_string: 'x', new_string: 'x' }, 'invalid_edit'],
        [{ path: 'bin.dat', old_string: '\u0001', new_string: 'z' }, 'binary_file'],
        [{ path: 'missing.txt', old_string: 'a', new_string: 'b' }, 'not_found'],
      ];
      for (const [input, code] of cases) {
        const before = readFileSync(file(input.path === 'missing.txt' ? 'twice.txt' : input.path));
        const mtime = statSync(file(input.path === 'missing.txt' ? 'twice.txt' : input.path)).mtimeMs;
        const error = await failure(edit(input));
        expect(error.code, code).to.equal(code);
        expect(readFileSync(file(input.path === 'missing.txt' ? 'twice.txt' : input.path)).equals(before)).to.equal(
          true,
        );
        expect(statSync(file(input.path === 'missing.txt' ? 'twice.txt' : input.path)).mtimeMs).to.equal(mtime);
      }
      const notUnique = await failure(edit({ path: 'twice.txt', old_string: 'x = 1', new_string: 'x = 2' }));
      expect(notUnique.message).to.include('occurs 2 times');
    });

    it("refuses an edit whose result would pass write's cap, naming it, and leaves the file as it was (replace_all wrote 100x the file)", async () => {
      writeFileSync(file('grow.txt'), 'a'.repeat(200_000));
      const error = await failure(
        edit({ path: 'grow.txt', old_string: 'a', new_string: 'b'.repeat(100), replace_all: true }),
      );
      expect(error.code).to.equal('too_large');
      expect(error.message).to.include("over write's cap of 10000000 characters");
      expect(readFileSync(file('grow.txt'), 'utf8')).to.equal('a'.repeat(200_000));
    });

    it('refuses a file over the size cap', async () => {
      writeFileSync(file('big.txt'), 'z'.repeat(4096));
      const error = await failure(
        editTool.execute(
          { path: 'big.txt', old_string: 'zz', new_string: 'y', replace_all: true },
          toolContext(ws.root, { maxFileBytes: 1024 }),
        ),
      );
      expect(error.code).to.equal('too_large');
    });
  });

  it('never writes inside .git, even through a symlink to it', async () => {
    mkdirSync(file('.git/hooks'));
    const { symlinkSync } = await import('node:fs');
    symlinkSync('.git/hooks', file('hooks'));
    expect((await failure(write('hooks/pre-commit', '#!/bin/sh\n'))).code).to.equal('write_protected');
  });

  // The config is code the host runs at its next start, outside every sandbox and policy: a model
  // allowed to write in the workspace could give itself any tool and any rule there.
  it("never writes or edits the host's config, under any name the config search reads but package.json", async () => {
    const { getDefaultSearchPlaces } = await import('cosmiconfig');
    const names = [
      ...getDefaultSearchPlaces('rousseau').filter((n) => n !== 'package.json'),
      ...['mts', 'cts', 'json', 'yaml', 'yml'].map((ext) => `rousseau.config.${ext}`),
    ];
    for (const name of [...names, ...names.map((n) => `sub/${n}`)]) {
      const error = await failure(write(name, "export default { policy: { default: 'allow' } };\n"));
      expect(error.code, name).to.equal('write_protected');
    }
    writeFileSync(file('rousseau.config.ts'), "export default { policy: { default: 'ask' } };\n");
    const { symlinkSync } = await import('node:fs');
    symlinkSync('rousseau.config.ts', file('settings.ts'));
    expect((await failure(write('settings.ts', 'x'))).code).to.equal('write_protected');
    expect((await failure(edit({ path: 'rousseau.config.ts', old_string: 'ask', new_string: 'allow' }))).code).to.equal(
      'write_protected',
    );
    expect(readFileSync(file('rousseau.config.ts'), 'utf8')).to.include("'ask'");
    // A name that only resembles one is written.
    await write('docs/rousseau.config.ts.md', 'notes');
  });
});
