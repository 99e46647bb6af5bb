import { expect } from 'chai';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { keyPath, loadConfig, validateConfig } from '../core/config.ts';
import { HostError } from '../core/errors.ts';
import { createHost } from '../core/host.ts';
import { runCli, runCliProcess, tempDir } from './helpers.ts';

function configError(fn: () => unknown): HostError {
  try {
    fn();
  } catch (error) {
    expect(error).to.be.instanceOf(HostError);
    return error as HostError;
  }
  throw new Error('expected a config error');
}

describe('config', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => {
    t = tempDir();
  });
  afterEach(() => t.cleanup());

  it('finds a TypeScript config (loaded with jiti) from a subdirectory, up to the project root', async () => {
    t.write('package.json', '{"name":"proj"}');
    t.write(
      'rousseau.config.ts',
      'const n: number = 5;\nexport default { builtins: false, agent: { maxTurns: n } };\n',
    );
    mkdirSync(join(t.dir, 'a', 'b'), { recursive: true });
    const found = await loadConfig({ cwd: join(t.dir, 'a', 'b') });
    expect(found.file).to.equal(join(t.dir, 'rousseau.config.ts'));
    expect(found.dir).to.equal(t.dir);
    expect(found.config).to.deep.equal({ builtins: false, agent: { maxTurns: 5 } });
  });

  it('does not search above the project root', async () => {
    t.write('rousseau.config.json', '{"builtins":false}');
    t.write('inner/package.json', '{"name":"inner"}');
    const found = await loadConfig({ cwd: join(t.dir, 'inner') });
    expect(found.file).to.equal(undefined);
    expect(found.config).to.deep.equal({});
  });

  for (const [file, text] of [
    ['rousseau.config.json', '{"builtins":["fs"]}'],
    ['rousseau.config.yaml', 'builtins:\n  - fs\n'],
    ['.rousseaurc', '{"builtins":["fs"]}'],
    ['rousseau.config.mjs', 'export default { builtins: ["fs"] };'],
    ['.config/rousseaurc.json', '{"builtins":["fs"]}'],
    ['package.json', '{"name":"x","rousseau":{"builtins":["fs"]}}'],
  ]) {
    it(`reads ${file}`, async () => {
      t.write(file!, text!);
      if (file !== 'package.json') t.write('package.json', '{"name":"x"}');
      const found = await loadConfig({ cwd: t.dir });
      expect(found.config).to.deep.equal({ builtins: ['fs'] });
    });
  }

  it("does not read a plugin package's manifest as host config: the folder's own config, or none, is found", async () => {
    // The manifest the template writes: a plugin package names its plugin under `rousseau`.
    t.write('package.json', '{"name":"rousseau-plugin-x","rousseau":{"plugin":"./src/index.ts"}}');
    const none = await loadConfig({ cwd: t.dir });
    expect(none).to.deep.equal({ config: {}, dir: t.dir });
    t.write('rousseau.config.json', '{"builtins":false}');
    const own = await loadConfig({ cwd: t.dir });
    expect(own.file).to.equal(join(t.dir, 'rousseau.config.json'));
    expect(own.config).to.deep.equal({ builtins: false });
    // A command run inside the plugin's folder works there.
    const tools = await runCli(['tools', '--json'], { cwd: t.dir });
    expect(tools.code, tools.stderr).to.equal(0);
  });

  it('refuses a package.json whose "rousseau" names a plugin and holds host config too, rather than drop the host keys', async () => {
    // Skipped as a manifest, the policy below was dropped unsaid, and the host ran on the default one.
    const file = t.write(
      'package.json',
      '{"name":"x","rousseau":{"plugin":"./p.ts","builtins":false,"policy":{"default":"deny"}}}',
    );
    const error = await loadConfig({ cwd: t.dir }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(HostError).with.property('code', 'RH_ERR_CONFIG_INVALID');
    expect((error as Error).message).to.contain(file);
    expect((error as Error).message).to.contain('"builtins", "policy"');
    expect((error as Error).message).to.contain('rousseau.config.json');
  });

  it('refuses two host configs in the folder the search stops at, naming both, rather than read the first unsaid', async () => {
    // package.json comes first in the search order: the deny policy beside it was never read.
    const manifest = t.write('package.json', '{"name":"x","rousseau":{"builtins":false}}');
    const other = t.write('rousseau.config.json', '{"policy":{"default":"deny"}}');
    const error = await loadConfig({ cwd: t.dir }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(HostError).with.property('code', 'RH_ERR_CONFIG_INVALID');
    expect((error as Error).message)
      .to.contain(manifest)
      .and.contain(other);
    // A package.json without host config beside the config, or a plugin's manifest, is no second config.
    t.write('package.json', '{"name":"x","rousseau":{"plugin":"./p.ts"}}');
    expect((await loadConfig({ cwd: t.dir })).file).to.equal(other);
    t.write('.rousseaurc', '{"builtins":false}');
    const two = await loadConfig({ cwd: t.dir }).catch((e: unknown) => e);
    expect((two as Error).message)
      .to.contain(join(t.dir, '.rousseaurc'))
      .and.contain(other);
  });

  it('refuses --config naming a file with no host config in it (a plugin manifest, a package.json without "rousseau")', async () => {
    for (const [text, why] of [
      ['{"name":"x","rousseau":{"plugin":"./p.ts"}}', /a plugin package's manifest .* not a host config/],
      ['{"name":"x"}', /holds no "rousseau" key/],
    ] as const) {
      const file = t.write('package.json', text);
      const error = await loadConfig({ cwd: t.dir, configFile: 'package.json' }).catch((e: unknown) => e);
      expect(error, text).to.be.instanceOf(HostError).with.property('code', 'RH_ERR_CONFIG_INVALID');
      expect((error as Error).message, text)
        .to.contain(file)
        .and.match(why);
    }
  });

  it('loads --config FILE instead of searching, and names a missing one', async () => {
    const file = t.write('custom/my.config.ts', 'export default { builtins: false };');
    expect((await loadConfig({ cwd: t.dir, configFile: 'custom/my.config.ts' })).file).to.equal(file);
    const error = await loadConfig({ cwd: t.dir, configFile: 'nope.ts' }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(HostError).with.property('code', 'RH_ERR_CONFIG_NOT_FOUND');
    expect((error as Error).message).to.contain(join(t.dir, 'nope.ts'));
  });

  it('names the file when a config fails to load', async () => {
    const file = t.write('rousseau.config.ts', 'export default {;');
    t.write('package.json', '{}');
    const error = await loadConfig({ cwd: t.dir }).catch((e: unknown) => e);
    expect(error).to.have.property('code', 'RH_ERR_CONFIG_LOAD');
    expect((error as Error).message).to.contain(file);
  });

  it('points at the line and column where a JSON config does not parse', async () => {
    const file = t.write('rousseau.config.json', '{\n  "builtins": false,\n  "policy": {"default": "allow",}\n}\n');
    t.write('package.json', '{}');
    const error = await loadConfig({ cwd: t.dir }).catch((e: unknown) => e);
    expect(error).to.have.property('code', 'RH_ERR_CONFIG_LOAD');
    expect((error as Error).message)
      .to.contain(file)
      .and.match(/> 3 \| {3}"policy": \{"default": "allow",\}\n {4}\| {33}\^/);
  });

  it('rejects unknown keys and wrong types, naming the file and each key path', async () => {
    const file = t.write(
      'rousseau.config.json',
      JSON.stringify({ plugins: ['./a', { module: './b', timeoutMs: 'fast' }], polcy: {}, agent: { maxTurns: 0 } }),
    );
    t.write('package.json', '{}');
    const error = await loadConfig({ cwd: t.dir }).catch((e: unknown) => e);
    expect(error).to.have.property('code', 'RH_ERR_CONFIG_INVALID');
    const message = (error as Error).message;
    expect(message).to.contain(file);
    expect(message).to.contain('polcy: unknown key (did you mean "policy"?)');
    expect(message).to.contain('plugins[1].timeoutMs');
    expect(message).to.contain('agent.maxTurns');
  });

  it('suggests the nearest known key at the level of the typo, and none when nothing is near', () => {
    const error = configError(() =>
      validateConfig({ plugins: [{ module: './a', isolaton: 'worker' }], log: { levl: 'info' }, zzz: 1 }, 'cfg.json'),
    );
    expect(error.message).to.contain('plugins[0].isolaton: unknown key (did you mean "isolation"?)');
    expect(error.message).to.match(/^ {2}zzz: unknown key$/m);
  });

  it('checks what the schema cannot: module xor mcp, an MCP entry needs a name', () => {
    const huge = configError(() =>
      validateConfig({ plugins: [{ module: './a', timeoutMs: 30 * 24 * 3600 * 1000 }] }, 'cfg.json'),
    );
    expect(huge.message).to.contain('plugins[0].timeoutMs').and.contain('2147483647');
    const e1 = configError(() => validateConfig({ plugins: [{ timeoutMs: 5 }] }, 'cfg.json'));
    expect(e1.message).to.contain('plugins[0]').and.contain('exactly one of "module"');
    const e2 = configError(() => validateConfig({ plugins: [{ mcp: { command: 'x' } }] }, 'cfg.json'));
    expect(e2.message).to.contain('plugins[0].name');
    const e3 = configError(() => validateConfig({ builtins: ['fs', 'ftp'] }, 'cfg.json'));
    expect(e3.message).to.contain('builtins[1]');
  });

  it('refuses a workspace that is not a directory, naming the key, and creates nothing there', async () => {
    const t = tempDir();
    try {
      t.write('rousseau.config.json', JSON.stringify({ builtins: ['fs'], workspace: './wrokspace' }));
      mkdirSync(join(t.dir, 'workspace'));
      const error = await createHost({ cwd: t.dir }).then(
        (host) => host.close().then(() => undefined),
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(HostError).and.include({ code: 'RH_ERR_CONFIG_INVALID' });
      expect((error as HostError).message)
        .to.contain(join(t.dir, 'rousseau.config.json'))
        .and.contain(`workspace: no directory at ${join(t.dir, 'wrokspace')}`);
      expect(existsSync(join(t.dir, 'wrokspace'))).to.equal(false);
      t.write(
        'rousseau.config.json',
        JSON.stringify({ builtins: ['fs'], workspace: './workspace', log: { audit: false } }),
      );
      const host = await createHost({ cwd: t.dir });
      expect(host.workspace).to.equal(join(t.dir, 'workspace'));
      await host.close();
    } finally {
      t.cleanup();
    }
  });

  it('turns JSON pointers into key paths', () => {
    expect(keyPath('/plugins/1/timeoutMs')).to.equal('plugins[1].timeoutMs');
    expect(keyPath('')).to.equal('');
    expect(keyPath('/policy/deny/0/a~1b')).to.equal('policy.deny[0].a/b');
  });

  it('a JavaScript config read again in the same process is read as the file now says, with what it imports', async () => {
    // Node's loader keeps a module it imported: `add` and `remove` read the config they wrote back,
    // and an embedder making a new host after an edit must not get the old policy.
    const cases = [
      [
        'rousseau.config.mjs',
        (n: number) =>
          `import maxTurns from './turns.mjs';\nexport default { builtins: false, agent: { maxTurns }, policy: { deny: [{ tool: 't${n}' }] } };\n`,
        'turns.mjs',
        (n: number) => `export default ${n};\n`,
      ],
      [
        'rousseau.config.cjs',
        (n: number) =>
          `module.exports = { builtins: false, agent: { maxTurns: require('./turns.cjs') }, policy: { deny: [{ tool: 't${n}' }] } };\n`,
        'turns.cjs',
        (n: number) => `module.exports = ${n};\n`,
      ],
    ] as const;
    for (const [file, config, dependency, value] of cases) {
      const dir = join(t.dir, file);
      for (const n of [1, 2, 3]) {
        t.write(join(file, dependency), value(n));
        t.write(join(file, file), config(n));
        const loaded = await loadConfig({ cwd: dir });
        expect(loaded.config, `${file} #${n}`).to.deep.equal({
          builtins: false,
          agent: { maxTurns: n },
          policy: { deny: [{ tool: `t${n}` }] },
        });
        const host = await createHost({ cwd: dir, audit: false, logLevel: 'error' });
        expect(host.config.policy?.deny).to.deep.equal([{ tool: `t${n}` }]);
        await host.close();
      }
    }
  });

  it('imports jiti for a TypeScript config only: a JSON config, or none, starts without it', async function () {
    this.timeout(30_000);
    // NODE_DEBUG=module: Node names every CommonJS module it loads on stderr (jiti is one).
    const loadsJiti = async (cwd: string) => {
      const r = await runCliProcess(['tools', '--json'], { cwd, env: { NODE_DEBUG: 'module' } });
      expect(r.code, r.stderr).to.equal(0);
      return /jiti\.cjs/.test(r.stderr);
    };
    t.write('package.json', '{"name":"proj"}');
    expect(await loadsJiti(t.dir)).to.equal(false);
    t.write('rousseau.config.json', '{ "builtins": false }');
    expect(await loadsJiti(t.dir)).to.equal(false);
    t.write('ts/package.json', '{"name":"proj-ts"}');
    t.write('ts/rousseau.config.ts', 'export default { builtins: false };\n');
    expect(await loadsJiti(join(t.dir, 'ts'))).to.equal(true);
  });
});
