// watchPlugins(): which directory each plugin is watched in, and which changes reload it.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { createHost, type Host } from '../core/index.ts';
import { watchPlugins, type PluginWatch } from '../core/watch.ts';
import { helperSource, pluginSource } from './fixtures/reload/live-plugin.ts';
import { tempDir, until } from './helpers.ts';

describe('watchPlugins()', function () {
  this.timeout(20_000);
  const tmp = tempDir('rh-watch-');
  let host: Host;
  let watching: PluginWatch;
  let reloads = 0;

  before(async () => {
    // A package of its own (outside the workspace), and a file in the project, whose package.json holds the workspace.
    tmp.write('pkg/package.json', '{ "name": "rousseau-plugin-live", "type": "module" }');
    tmp.write('pkg/src/index.ts', pluginSource('word').replace("'./helper.ts'", "'./lib/helper.ts'"));
    tmp.write('pkg/src/lib/helper.ts', helperSource('one'));
    tmp.write('project/package.json', '{ "name": "project" }');
    tmp.write('project/tools/other.ts', pluginSource('other').replace("name: 'live'", "name: 'other'"));
    tmp.write('project/tools/helper.ts', helperSource('other'));
    mkdirSync(join(tmp.dir, 'pkg', 'node_modules'));
    mkdirSync(join(tmp.dir, 'pkg', '.git'));
    host = await createHost({
      cwd: join(tmp.dir, 'project'),
      config: {
        builtins: ['fs'],
        plugins: [
          { module: '../pkg/src/index.ts', isolation: 'inline' },
          { module: './tools/other.ts', isolation: 'inline' },
        ],
        policy: { default: 'allow' },
      },
      audit: false,
      logLevel: 'error',
    });
    watching = watchPlugins(host, { debounceMs: 50, onReload: () => reloads++ });
  });
  after(async () => {
    watching.stop();
    await host.close();
    tmp.cleanup();
  });

  it('watches a package from its root, a project file from its directory, and no built-in', () => {
    expect(Object.fromEntries(watching.roots)).to.deep.equal({
      '../pkg/src/index.ts': join(tmp.dir, 'pkg'),
      './tools/other.ts': join(tmp.dir, 'project', 'tools'),
    });
  });

  it('reloads on an edit in a nested directory', async () => {
    writeFileSync(join(tmp.dir, 'pkg', 'src', 'lib', 'helper.ts'), helperSource('two'));
    await until(async () => (await host.call('word', {})).content === 'two', { message: 'the edit to be served' });
  });

  it('reloads on a directory created after the start', async () => {
    tmp.write('pkg/src/more/helper.ts', helperSource('three'));
    writeFileSync(
      join(tmp.dir, 'pkg', 'src', 'index.ts'),
      pluginSource('word').replace("'./helper.ts'", "'./more/helper.ts'"),
    );
    await until(async () => (await host.call('word', {})).content === 'three', {
      message: 'the new file to be served',
    });
    const before = reloads;
    writeFileSync(join(tmp.dir, 'pkg', 'src', 'more', 'helper.ts'), helperSource('four'));
    await until(() => reloads > before, { message: 'a reload for the new directory' });
    await until(async () => (await host.call('word', {})).content === 'four', { message: 'the edit to be served' });
  });

  it('reloads on a directory removed and made again', async () => {
    rmSync(join(tmp.dir, 'pkg', 'src', 'more'), { recursive: true });
    const live = () => host.plugins().find((p) => p.name === 'live');
    await until(() => live()?.reloadError, { message: 'the reload to fail on the missing import' });
    expect((await host.call('word', {})).content, 'the last good version serves').to.equal('four');
    tmp.write('pkg/src/more/helper.ts', helperSource('five'));
    await until(async () => (await host.call('word', {})).content === 'five', { message: 'the new file to be served' });
  });

  it('does not reload for node_modules, dot directories, backup files or files that are not code', async () => {
    // Let any reload still due from the edits above run first.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = reloads;
    writeFileSync(join(tmp.dir, 'pkg', 'node_modules', 'dep.js'), '');
    writeFileSync(join(tmp.dir, 'pkg', '.git', 'index'), '');
    writeFileSync(join(tmp.dir, 'pkg', 'src', 'index.ts~'), '');
    writeFileSync(join(tmp.dir, 'pkg', 'src', 'cache.log'), '');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(reloads).to.equal(before);
  });
});
