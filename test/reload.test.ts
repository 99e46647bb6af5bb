// host.reload(): a plugin loads again from its edited files beside the old version, which serves
// until the new one passes the contract check, and finishes the calls it already had.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { createHost, type Host } from '../core/index.ts';
import type { Isolation } from '../core/types.ts';
import { helperSource, pluginSource } from './fixtures/reload/live-plugin.ts';
import { tempDir, until } from './helpers.ts';

for (const isolation of ['inline', 'worker', 'process'] as Isolation[]) {
  describe(`host.reload() (${isolation})`, function () {
    this.timeout(20_000);
    const tmp = tempDir('rh-reload-');
    let host: Host;
    let changes = 0;
    const entry = join(tmp.dir, 'live', 'index.ts');

    before(async () => {
      tmp.write('live/index.ts', pluginSource('word'));
      tmp.write('live/helper.ts', helperSource('one'));
      host = await createHost({
        cwd: tmp.dir,
        config: { builtins: false, plugins: [{ module: './live/index.ts', isolation }], policy: { default: 'allow' } },
        audit: false,
        logLevel: 'error',
      });
      host.onToolsChanged(() => changes++);
    });
    after(async () => {
      await host.close();
      tmp.cleanup();
    });

    it('re-imports an edited helper file, not only the entry', async () => {
      expect((await host.call('word', {})).content).to.equal('one');
      tmp.write('live/helper.ts', helperSource('two'));
      const [status] = await host.reload('live');
      expect(status).to.include({ name: 'live', status: 'loaded' });
      expect(status!.reloadError).to.equal(undefined);
      expect((await host.call('word', {})).content).to.equal('two');
      expect(changes, 'same tools: nothing to tell').to.equal(0);
    });

    it('swaps the tool set and tells the listeners', async () => {
      writeFileSync(entry, pluginSource('phrase'));
      await host.reload();
      expect(host.tools().map((t) => t.name)).to.deep.equal(['phrase']);
      expect(changes).to.equal(1);
      expect((await host.call('word', {})).code).to.equal('unknown_tool');
      expect((await host.call('phrase', {})).content).to.equal('two');
    });

    it('keeps the last good version serving when the edit does not parse', async () => {
      writeFileSync(entry, `${pluginSource('phrase')}\nexport const broken = ;\n`);
      const [status] = await host.reload('live');
      expect(status).to.include({ status: 'loaded' });
      expect(status!.reloadError?.code).to.equal('RH_ERR_PLUGIN_IMPORT');
      expect(host.plugins()[0]!.reloadError?.code, 'kept until a reload succeeds').to.equal('RH_ERR_PLUGIN_IMPORT');
      expect((await host.call('phrase', {})).content).to.equal('two');
    });

    it('keeps the last good version serving when the edit breaks the contract, and says why', async () => {
      writeFileSync(entry, pluginSource('Bad Name'));
      const [status] = await host.reload('live');
      expect(status!.reloadError?.code).to.equal('RH_ERR_PLUGIN_CONTRACT');
      expect(status!.reloadError?.message).to.include('Bad Name');
      expect(status!.tools.map((t) => t.name)).to.deep.equal(['phrase']);
      expect((await host.call('phrase', {})).content).to.equal('two');
      writeFileSync(entry, pluginSource('phrase'));
      const [fixed] = await host.reload('live');
      expect(fixed!.reloadError).to.equal(undefined);
    });

    it('finishes a call in flight on the old version, closing it only then, and serves the new one to the next', async () => {
      const gate = join(tmp.dir, `gate-${isolation}`);
      // Versions the earlier tests replaced may still be closing: each writes its own word when disposed.
      const log = join(tmp.dir, 'live', 'disposed.log');
      const disposedWords = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n') : []);
      tmp.write('live/helper.ts', helperSource('old'));
      await host.reload('live');
      const inFlight = host.call('phrase', { gate });
      tmp.write('live/helper.ts', helperSource('new'));
      await host.reload('live');
      expect((await host.call('phrase', {})).content, 'the new version serves').to.equal('new');
      expect(disposedWords(), 'the old version is still open').to.not.include('old');
      writeFileSync(gate, '');
      const result = await inFlight;
      expect([result.isError, result.content]).to.deep.equal([false, 'old']);
      await until(() => disposedWords().includes('old'), { message: 'the old version to be disposed' });
    });
  });
}

describe('host.reload() edge cases', function () {
  this.timeout(20_000);
  const tmp = tempDir('rh-reload-');
  after(() => tmp.cleanup());
  /** A host of the given plugins, inline, every call allowed. */
  const inlineHost = (...modules: string[]) =>
    createHost({
      cwd: tmp.dir,
      config: {
        builtins: false,
        plugins: modules.map((module) => ({ module, isolation: 'inline' as const })),
        policy: { default: 'allow' },
      },
      audit: false,
      logLevel: 'error',
    });

  it('loads a plugin that failed at start once its file is fixed', async () => {
    tmp.write('late/index.ts', 'export default {;\n');
    tmp.write('late/helper.ts', helperSource('late'));
    const host = await inlineHost('./late/index.ts');
    try {
      let told = 0;
      const unsubscribe = host.onToolsChanged(() => told++);
      expect(host.plugins()[0]!.status).to.equal('failed');
      tmp.write('late/index.ts', pluginSource('late_word'));
      const [status] = await host.reload('./late/index.ts');
      expect(status).to.include({ name: 'live', status: 'loaded' });
      expect((await host.call('late_word', {})).content).to.equal('late');
      expect(told).to.equal(1);
      unsubscribe();
      tmp.write('late/index.ts', pluginSource('later_word'));
      await host.reload();
      expect(told, 'unsubscribed').to.equal(1);
    } finally {
      await host.close();
    }
  });

  it('reports a name another plugin holds, on a plugin that failed at start', async () => {
    tmp.write('first/index.ts', pluginSource('first_word'));
    tmp.write('first/helper.ts', helperSource('first'));
    tmp.write('second/index.ts', 'export default {;\n');
    tmp.write('second/helper.ts', helperSource('second'));
    const host = await inlineHost('./first/index.ts', './second/index.ts');
    try {
      tmp.write('second/index.ts', pluginSource('second_word')); // also named "live"
      const [status] = await host.reload('./second/index.ts');
      expect(status).to.include({ status: 'failed' });
      expect(status!.error?.code).to.equal('RH_ERR_PLUGIN_DUPLICATE');
      expect(host.tools().map((t) => t.name)).to.deep.equal(['first_word']);
    } finally {
      await host.close();
    }
  });

  it('answers an empty list for a name no plugin has, and after close', async () => {
    const host = await createHost({ cwd: tmp.dir, config: { builtins: ['fs'] }, audit: false, logLevel: 'error' });
    expect(await host.reload('nope')).to.deep.equal([]);
    await host.close();
    expect(await host.reload()).to.deep.equal([]);
  });
});
