import { expect } from 'chai';
import { linkSync, lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mkdirConfined, openConfined, resolveInWorkspace } from '../../../plugins/fs/confine.ts';
import { loadPluginModule } from '../load.ts';
import { textOf, toolContext } from '../tool-context.ts';
import { makeWorkspace, type Layout } from './fixture.ts';

describe('plugins/fs confinement (cases 51–56)', () => {
  let readTool: typeof import('../../../plugins/fs/read.ts').readTool;
  let writeTool: typeof import('../../../plugins/fs/write.ts').writeTool;
  let editTool: typeof import('../../../plugins/fs/edit.ts').editTool;
  before(async () => {
    ({ readTool } = await loadPluginModule<typeof import('../../../plugins/fs/read.ts')>('plugins/fs/read.ts'));
    ({ writeTool } = await loadPluginModule<typeof import('../../../plugins/fs/write.ts')>('plugins/fs/write.ts'));
    ({ editTool } = await loadPluginModule<typeof import('../../../plugins/fs/edit.ts')>('plugins/fs/edit.ts'));
  });
  let ws: Layout;
  let listed: string[];
  beforeEach(() => {
    ws = makeWorkspace();
    listed = ws.outsideListing();
  });
  afterEach(() => {
    // Whatever a test tried, nothing was created or changed outside the workspace.
    expect(ws.outsideListing()).to.deep.equal(listed);
    expect(readFileSync(join(ws.outside, 'secret.txt'), 'utf8')).to.equal('outside secret\n');
    ws.cleanup();
  });

  const read = (path: string) => readTool.execute({ path }, toolContext(ws.root));
  const write = (path: string, content = 'pwned\n') => writeTool.execute({ path, content }, toolContext(ws.root));
  const codeOf = (p: unknown) =>
    Promise.resolve(p).then(
      () => 'resolved',
      (e: Error & { code?: string }) => e.code ?? e.message,
    );

  it('refuses .. in any position, for reads and writes', async () => {
    for (const path of ['../outside/secret.txt', 'sub/../../outside/secret.txt', '..', 'sub/../..']) {
      expect(await codeOf(read(path)), path).to.equal('outside_workspace');
      expect(await codeOf(write(path)), path).to.equal('outside_workspace');
    }
  });

  it('refuses absolute paths outside and accepts them inside, in either spelling of the root', async () => {
    expect(await codeOf(read(join(ws.outside, 'secret.txt')))).to.equal('outside_workspace');
    expect(await codeOf(read('/etc/passwd'))).to.equal('outside_workspace');
    expect(await codeOf(write(join(ws.outside, 'new.txt')))).to.equal('outside_workspace');
    expect(textOf(await read(join(ws.root, 'a.txt')))).to.include('alpha');
  });

  it('refuses a sibling that shares the root as a prefix (ROOT-evil)', async () => {
    expect(await codeOf(read('../ROOT-evil/x.txt'))).to.equal('outside_workspace');
    expect(await codeOf(read(join(ws.evil, 'x.txt')))).to.equal('outside_workspace');
    expect(await codeOf(write(`${ws.root}-evil/y.txt`))).to.equal('outside_workspace');
  });

  it('refuses ~ instead of expanding it', async () => {
    expect(await codeOf(read('~/.ssh/id_rsa'))).to.equal('invalid_path');
    expect(await codeOf(write('~'))).to.equal('invalid_path');
  });

  it('refuses a NUL byte', async () => {
    expect(await codeOf(read('a.txt\0.png'))).to.equal('invalid_path');
    expect(await codeOf(write('b\0'))).to.equal('invalid_path');
  });

  it('refuses a symlink out of the root as the last component, for read, write and edit', async () => {
    expect(await codeOf(read('link-out'))).to.equal('symlink_escape');
    expect(await codeOf(write('link-out'))).to.equal('symlink_escape');
    expect(
      await codeOf(
        editTool.execute({ path: 'link-out', old_string: 'outside', new_string: 'x' }, toolContext(ws.root)),
      ),
    ).to.equal('symlink_escape');
    expect(lstatSync(join(ws.root, 'link-out')).isSymbolicLink()).to.equal(true);
  });

  it('refuses a symlinked directory out of the root in the middle of a path', async () => {
    expect(await codeOf(read('dir-out/secret.txt'))).to.equal('symlink_escape');
    expect(await codeOf(write('dir-out/new.txt'))).to.equal('symlink_escape');
    expect(await codeOf(write('dir-out/deeper/new.txt'))).to.equal('symlink_escape');
  });

  it('refuses a dangling symlink as a write target and never creates its target', async () => {
    expect(await codeOf(write('dangling'))).to.equal('dangling_symlink');
    expect(await codeOf(write('dangling-dir/x.txt'))).to.equal('dangling_symlink');
    expect(await codeOf(read('dangling'))).to.equal('not_found');
  });

  it('follows symlinks that stay inside the root', async () => {
    expect(textOf(await read('link-in'))).to.include('alpha');
    expect(textOf(await read('sub-link/b.txt'))).to.include('inside b');
    await write('link-in', 'through the link\n');
    expect(readFileSync(join(ws.root, 'a.txt'), 'utf8')).to.equal('through the link\n');
    expect(lstatSync(join(ws.root, 'link-in')).isSymbolicLink()).to.equal(true);
  });

  it('writing through a hard link to an outside file replaces the workspace name only', async () => {
    linkSync(join(ws.outside, 'secret.txt'), join(ws.root, 'hard'));
    await write('hard', 'replaced\n');
    expect(readFileSync(join(ws.root, 'hard'), 'utf8')).to.equal('replaced\n');
    // afterEach: the outside file still holds its content.
  });

  it('checks where a descriptor really points after opening (a directory swapped for a symlink)', async () => {
    // As if dir-out had been a real directory when the walk checked it and was swapped afterwards.
    const root = (await resolveInWorkspace(ws.root, '.', 'read')).root;
    const error = await openConfined(join(root, 'dir-out', 'secret.txt'), root, 'read').then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    expect(error?.code).to.equal('symlink_escape');
  });

  it('removes a file it created outside when a directory was swapped for a symlink before the open', async () => {
    // afterEach: nothing was left in outside/ (the escape was refused only after O_EXCL had created the file).
    const root = (await resolveInWorkspace(ws.root, '.', 'read')).root;
    const error = await openConfined(join(root, 'dir-out', 'temp.tmp'), root, 'write').then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    expect(error?.code).to.equal('symlink_escape');
  });

  it('creates missing directories one at a time, refusing one that became a symlink since the walk', async () => {
    const root = (await resolveInWorkspace(ws.root, '.', 'read')).root;
    const error = await mkdirConfined(join(root, 'dir-out', 'made', 'deeper'), root).then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    expect(error?.code).to.equal('symlink_escape');
    await mkdirConfined(join(root, 'sub', 'new', 'deeper'), root);
    expect(lstatSync(join(root, 'sub', 'new', 'deeper')).isDirectory()).to.equal(true);
  });

  it('protects .git and the host state directory from writes but not from reads', async () => {
    expect(await codeOf(write('.git/config'))).to.equal('write_protected');
    expect(await codeOf(write('.git/hooks/pre-commit'))).to.equal('write_protected');
    expect(await codeOf(write('.rousseau/audit.jsonl'))).to.equal('write_protected');
    expect(await codeOf(write('vendor/lib/.git/HEAD'))).to.equal('write_protected');
    expect(textOf(await read('.git/config'))).to.include('[core]');
  });
});
