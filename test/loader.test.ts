import { expect } from 'chai';
import { join } from 'node:path';
import { createHost } from '../core/index.ts';
import { resolvePlugin } from '../core/loader.ts';
import { FIXTURES, tempDir } from './helpers.ts';

const fixture = (name: string) => join(FIXTURES, 'plugins', name);
const inline = (name: string, extra: Record<string, unknown> = {}) => ({
  module: fixture(name),
  isolation: 'inline' as const,
  ...extra,
});

async function statuses(plugins: unknown[]) {
  const host = await createHost({
    cwd: FIXTURES,
    audit: false,
    logLevel: 'error',
    config: { builtins: false, plugins: plugins as never, policy: { default: 'allow' } },
  });
  const result = { plugins: host.plugins(), tools: host.tools().map((t) => t.name), host };
  return result;
}

describe('loader', () => {
  it('loads TypeScript, ESM and CommonJS plugins, with no build step', async () => {
    const { plugins, tools, host } = await statuses([inline('echo.ts'), inline('js-esm.mjs'), inline('js-cjs.cjs')]);
    expect(plugins.map((p) => [p.name, p.status])).to.deep.equal([
      ['echo', 'loaded'],
      ['js-esm', 'loaded'],
      ['js-cjs', 'loaded'],
    ]);
    expect(tools).to.deep.equal(['echo', 'lower', 'upper']);
    expect((await host.call('upper', '{"text":"abc"}')).content).to.equal('ABC');
    expect((await host.call('lower', '{"text":"ABC"}')).content).to.equal('abc');
    await host.close();
  });

  it('marks each broken plugin failed with its own reason, and loads the others', async () => {
    const { plugins, tools, host } = await statuses([
      inline('broken-import.ts'),
      inline('broken-syntax.ts'),
      inline('echo.ts'),
      inline('broken-setup.ts'),
      inline('broken-contract.ts'),
      inline('broken-options.ts', { options: { apiKey: 'short' } }),
      inline('broken-hang.ts', { loadTimeoutMs: 300 }),
      inline('does-not-exist.ts'),
      // An MCP server that never answers initialize (it ends when its stdin does, at close).
      {
        name: 'silent',
        mcp: { command: process.execPath, args: ['-e', "process.stdin.on('end', () => process.exit()).resume()"] },
        loadTimeoutMs: 300,
      },
    ]);
    const byFile = (f: string) => plugins.find((p) => p.source.endsWith(f))!;
    expect(byFile('echo.ts').status).to.equal('loaded');
    expect(tools).to.deep.equal(['echo']);
    expect(byFile('broken-import.ts').error).to.deep.include({ code: 'RH_ERR_PLUGIN_IMPORT' });
    expect(byFile('broken-import.ts').error!.message).to.contain('boom at import');
    expect(byFile('broken-syntax.ts').error!.code).to.equal('RH_ERR_PLUGIN_IMPORT');
    expect(byFile('broken-setup.ts').error!.code).to.equal('RH_ERR_PLUGIN_SETUP');
    expect(byFile('broken-setup.ts').error!.message).to.contain('cannot reach the database');
    const contract = byFile('broken-contract.ts').error!;
    expect(contract.code).to.equal('RH_ERR_PLUGIN_CONTRACT');
    expect(contract.violations!.map((v) => v.pointer)).to.include.members([
      '/name',
      '/version',
      '/tools/0/execute',
      '/tools/1/inputSchema/type',
    ]);
    expect(contract.message).to.contain(fixture('broken-contract.ts'));
    const options = byFile('broken-options.ts').error!;
    expect(options.code).to.equal('RH_ERR_PLUGIN_OPTIONS');
    expect(options.message).to.contain('options/apiKey').and.contain('retries');
    expect(byFile('broken-hang.ts').error!.code).to.equal('RH_ERR_PLUGIN_LOAD_TIMEOUT');
    expect(byFile('broken-hang.ts').error!.message).to.contain('(a top-level await or a setup() that never resolves?)');
    // An MCP server has no setup(): its hint is its own, and names the usual cause (npx downloading it).
    const silent = byFile('mcp:silent').error!;
    expect(silent.code).to.equal('RH_ERR_PLUGIN_LOAD_TIMEOUT');
    expect(silent.message)
      .to.contain(
        "Plugin 'mcp:silent' did not finish loading within 300 ms (an MCP server must start, answer initialize",
      )
      .and.contain("raise the entry's loadTimeoutMs")
      .and.not.contain('setup()');
    expect(byFile('does-not-exist.ts').error!.code).to.equal('RH_ERR_PLUGIN_NOT_FOUND');
    expect((await host.call('echo', '{"text":"still here"}')).content).to.equal('still here');
    await host.close();
  });

  it('fails a plugin whose options its own schema cannot check, rather than pass them to setup unchecked', async () => {
    const { plugins, tools, host } = await statuses([
      inline('options-unresolvable.ts', { options: { a: 'anything' } }),
    ]);
    expect(tools).to.deep.equal([]);
    expect(plugins[0]!.status).to.equal('failed');
    expect(plugins[0]!.error!.code).to.equal('RH_ERR_PLUGIN_OPTIONS');
    expect(plugins[0]!.error!.message).to.contain('cannot be checked');
    await host.close();
  });

  it('tells an unknown option the nearest one the plugin declares', async () => {
    const host = await createHost({
      cwd: FIXTURES,
      audit: false,
      logLevel: 'error',
      config: { builtins: [{ name: 'shell', options: { sandbx: 'none' } }] },
    });
    const [shell] = host.plugins();
    await host.close();
    expect(shell!.error).to.include({ code: 'RH_ERR_PLUGIN_OPTIONS' });
    expect(shell!.error!.message).to.contain('options/sandbx: unknown key (did you mean "sandbox"?)');
  });

  it('fails the later of two plugins that share a tool name, naming both', async () => {
    const { plugins, host } = await statuses([inline('echo.ts'), inline('collide.ts')]);
    expect(plugins[0]!.status).to.equal('loaded');
    expect(plugins[1]!.status).to.equal('failed');
    expect(plugins[1]!.error!.code).to.equal('RH_ERR_TOOL_COLLISION');
    expect(plugins[1]!.error!.message)
      .to.contain("Tool 'echo'")
      .and.contain("plugin 'collide'")
      .and.contain("plugin 'echo'");
    expect((await host.call('echo', '{"text":"first"}')).content).to.equal('first');
    await host.close();
  });

  it('fails a second plugin with the same name', async () => {
    const { plugins, host } = await statuses([inline('echo.ts'), inline('echo.ts')]);
    expect(plugins.map((p) => p.status)).to.deep.equal(['loaded', 'failed']);
    expect(plugins[1]!.error!.code).to.equal('RH_ERR_PLUGIN_DUPLICATE');
    await host.close();
  });

  it('skips disabled plugins', async () => {
    const { plugins, host } = await statuses([inline('echo.ts', { enabled: false })]);
    expect(plugins).to.deep.equal([]);
    await host.close();
  });

  it('lists tools sorted by name, whatever the plugin order', async () => {
    const a = await statuses([inline('js-esm.mjs'), inline('echo.ts'), inline('js-cjs.cjs')]);
    const b = await statuses([inline('js-cjs.cjs'), inline('js-esm.mjs'), inline('echo.ts')]);
    expect(a.tools).to.deep.equal(b.tools).and.deep.equal(['echo', 'lower', 'upper']);
    await a.host.close();
    await b.host.close();
  });

  it("resolves a plugin's rousseau-host and typebox imports to the host's own copies", async () => {
    const t = tempDir();
    // A plugin package that brought its own copies: importing either would throw.
    for (const name of ['typebox', 'rousseau-host']) {
      t.write(
        `node_modules/${name}/package.json`,
        JSON.stringify({ name, type: 'module', exports: { '.': './index.js', './compile': './index.js' } }),
      );
      t.write(`node_modules/${name}/index.js`, `throw new Error('second copy of ${name} loaded');`);
    }
    t.write(
      'plugin.ts',
      `import Type from 'typebox';
       import { Compile } from 'typebox/compile';
       import { definePlugin } from 'rousseau-host';
       const schema = Type.Object({ n: Type.Integer({ description: 'A number.' }) });
       export default definePlugin({ name: 'own-copies', version: '1.0.0', tools: [
         { name: 'check_n', description: 'Checks n.', inputSchema: schema, execute: ({ n }: { n: number }) => String(Compile(schema).Check({ n })) },
       ] });`,
    );
    const host = await createHost({
      cwd: t.dir,
      audit: false,
      logLevel: 'error',
      config: {
        builtins: false,
        plugins: [{ module: './plugin.ts', isolation: 'inline' }],
        policy: { default: 'allow' },
      },
    });
    expect(host.plugins()[0]!.error).to.equal(undefined);
    expect((await host.call('check_n', '{"n":3}')).content).to.equal('true');
    await host.close();
    t.cleanup();
  });

  describe('resolving specifiers', () => {
    let t: ReturnType<typeof tempDir>;
    before(() => {
      t = tempDir();
      t.write('local/index.ts', 'export default {}');
      t.write('file-no-ext.ts', 'export default {}');
      t.write(
        'node_modules/rousseau-plugin-weather/package.json',
        JSON.stringify({ name: 'rousseau-plugin-weather', exports: { '.': { import: './src/index.ts' } } }),
      );
      t.write('node_modules/rousseau-plugin-weather/src/index.ts', 'export default {}');
      t.write(
        'node_modules/@acme/rousseau-plugin/package.json',
        JSON.stringify({ name: '@acme/rousseau-plugin', main: 'main.js' }),
      );
      t.write('node_modules/@acme/rousseau-plugin/main.js', 'module.exports = {}');
      t.write('node_modules/plain-name/package.json', JSON.stringify({ name: 'plain-name', module: 'esm.mjs' }));
      t.write('node_modules/plain-name/esm.mjs', 'export default {}');
      // A plugin package says where its plugin is; that wins over its exports (its library face).
      t.write(
        'node_modules/rousseau-plugin-dual/package.json',
        JSON.stringify({ name: 'rousseau-plugin-dual', exports: './lib.js', rousseau: { plugin: './src/plugin' } }),
      );
      t.write('node_modules/rousseau-plugin-dual/lib.js', 'export const x = 1;');
      t.write('node_modules/rousseau-plugin-dual/src/plugin.ts', 'export default {}');
      t.write(
        'folder-plugin/package.json',
        JSON.stringify({ name: 'folder-plugin', rousseau: { plugin: './src/index.ts' } }),
      );
      t.write('folder-plugin/src/index.ts', 'export default {}');
      t.write(
        'exported/package.json',
        JSON.stringify({ name: 'exported', exports: { '.': { rousseau: './p.ts', import: './lib.js' } } }),
      );
      t.write('exported/p.ts', 'export default {}');
      t.write('project/package.json', JSON.stringify({ name: 'an-agent', dependencies: {} }));
      t.write('renamed/package.json', JSON.stringify({ name: 'renamed', rousseau: { plugin: './src/index.ts' } }));
      t.write('renamed/src/main.ts', 'export default {}');
      t.write('no-manifest/README.md', '# nothing to load');
      t.write(
        'node_modules/rousseau-plugin-broken/package.json',
        JSON.stringify({ name: 'rousseau-plugin-broken', rousseau: { plugin: './gone.ts' } }),
      );
    });
    after(() => t.cleanup());

    it('resolves paths relative to the config directory: files, extensionless, directories', () => {
      expect(resolvePlugin('./local', t.dir)).to.equal(join(t.dir, 'local/index.ts'));
      expect(resolvePlugin('./file-no-ext', t.dir)).to.equal(join(t.dir, 'file-no-ext.ts'));
      expect(resolvePlugin(join(t.dir, 'file-no-ext.ts'), '/')).to.equal(join(t.dir, 'file-no-ext.ts'));
    });

    it('resolves package names from node_modules upward, with rousseau-plugin- short names', () => {
      const sub = join(t.dir, 'local');
      expect(resolvePlugin('rousseau-plugin-weather', sub)).to.equal(
        join(t.dir, 'node_modules/rousseau-plugin-weather/src/index.ts'),
      );
      expect(resolvePlugin('weather', sub)).to.equal(join(t.dir, 'node_modules/rousseau-plugin-weather/src/index.ts'));
      expect(resolvePlugin('@acme', t.dir)).to.equal(join(t.dir, 'node_modules/@acme/rousseau-plugin/main.js'));
      expect(resolvePlugin('plain-name', t.dir)).to.equal(join(t.dir, 'node_modules/plain-name/esm.mjs'));
    });

    it('reads where a package keeps its plugin: "rousseau": { "plugin" } first, then a "rousseau" exports condition', () => {
      expect(resolvePlugin('dual', t.dir)).to.equal(join(t.dir, 'node_modules/rousseau-plugin-dual/src/plugin.ts'));
      expect(resolvePlugin('./folder-plugin', t.dir)).to.equal(join(t.dir, 'folder-plugin/src/index.ts'));
      expect(resolvePlugin('./exported', t.dir)).to.equal(join(t.dir, 'exported/p.ts'));
    });

    it('says what it tried when nothing resolves', () => {
      expect(() => resolvePlugin('./nope', t.dir)).to.throw(/no file or package at/);
      expect(() => resolvePlugin('ghost', t.dir)).to.throw(/"ghost" or "rousseau-plugin-ghost"/);
      // A bare name is a package name even when a file of that name is there: the error says how to mean the file.
      expect(() => resolvePlugin('local/index.ts', t.dir)).to.throw(
        /there is a file or folder local\/index\.ts here: write \.\/local\/index\.ts to load it/,
      );
    });

    it('says why a folder that is there gives no module, instead of saying nothing is there', () => {
      expect(() => resolvePlugin('./project', t.dir)).to.throw(
        `${join(t.dir, 'project/package.json')} leads to no module: no "rousseau": { "plugin": "./src/index.ts" }, "exports", "module" or "main" names a file there`,
      );
      expect(() => resolvePlugin('./renamed', t.dir)).to.throw(
        `names its plugin "rousseau": { "plugin": "./src/index.ts" }, and there is no file at ${join(t.dir, 'renamed/src/index.ts')}`,
      );
      expect(() => resolvePlugin('./no-manifest', t.dir)).to.throw(
        `${join(t.dir, 'no-manifest')} is a folder with no package.json and no index file`,
      );
      // Installed, but its entry is gone: the package is named as broken, not as missing.
      expect(() => resolvePlugin('broken', t.dir)).to.throw(
        `names its plugin "rousseau": { "plugin": "./gone.ts" }, and there is no file at ${join(t.dir, 'node_modules/rousseau-plugin-broken/gone.ts')}`,
      );
    });
  });
});
