// The fs plugin as the host loads it: the built-in entry, the loader, validation, the dispatcher.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHost, type Host } from '../../../core/host.ts';
import { makeWorkspace, type Layout } from './fixture.ts';

describe('plugins/fs through the host', () => {
  let ws: Layout;
  let host: Host;
  beforeEach(async () => {
    ws = makeWorkspace();
    host = await createHost({ cwd: ws.root, config: { builtins: ['fs'], policy: { default: 'allow' } }, audit: false });
  });
  afterEach(async () => {
    await host.close();
    ws.cleanup();
  });

  it('loads as a built-in with its six tools', () => {
    const [fs] = host.plugins();
    expect(fs).to.include({ name: 'fs', status: 'loaded', isolation: 'inline' });
    expect(fs!.tools.map((t) => t.name)).to.deep.equal(['edit', 'glob', 'grep', 'ls', 'read', 'write']);
  });

  it('reads, writes and edits from JSON input', async () => {
    expect(await host.call('read', '{"path":"a.txt"}')).to.include({
      isError: false,
      content: '     1\talpha\n     2\tbeta\n     3\tgamma',
    });
    const wrote = await host.call('write', '{"path":"out/n.txt","content":"one\\n"}');
    expect(wrote).to.include({ isError: false, content: 'created out/n.txt: 4 bytes, 1 line' });
    const edited = await host.call('edit', { path: 'out/n.txt', old_string: 'one', new_string: 'two' });
    expect(edited.isError).to.equal(false);
    expect(readFileSync(join(ws.root, 'out/n.txt'), 'utf8')).to.equal('two\n');
  });

  it('turns a confinement refusal into a tool error the model can read', async () => {
    for (const [tool, input, code] of [
      ['read', '{"path":"../outside/secret.txt"}', 'outside_workspace'],
      ['read', '{"path":"link-out"}', 'symlink_escape'],
      ['write', '{"path":"dir-out/x","content":""}', 'symlink_escape'],
      ['write', '{"path":"dangling","content":"x"}', 'dangling_symlink'],
      ['read', '{"path":"a.txt\\u0000"}', 'invalid_path'],
    ] as const) {
      const result = await host.call(tool, input);
      expect(result, input).to.include({ isError: true, code: 'tool_error' });
      expect(result.content, input).to.include(`[${code}]`);
    }
    expect(ws.outsideListing().map((p) => p.slice(ws.base.length))).to.deep.equal([
      '/ROOT-evil/x.txt',
      '/outside/secret.txt',
    ]);
  });

  it('rejects input outside the schema before the tool runs: extra keys, a pattern over the cap', async () => {
    expect((await host.call('read', '{"path":"a.txt","mode":"raw"}')).code).to.equal('invalid_input');
    expect((await host.call('grep', { pattern: 'x'.repeat(1001) })).code).to.equal('invalid_input');
    expect((await host.call('read', '{"path":"a.txt","offset":0}')).code).to.equal('invalid_input');
  });

  it('refuses caps past what a string can hold: a tool would build a text V8 cannot (item 4)', async () => {
    for (const options of [{ maxFileBytes: 1024 ** 3 }, { readMaxBytes: 1024 ** 3 }]) {
      const capped = await createHost({
        cwd: ws.root,
        config: { builtins: [{ name: 'fs', options }] },
        audit: false,
        logLevel: 'error',
      });
      const [fs] = capped.plugins();
      await capped.close();
      expect(fs, JSON.stringify(options)).to.include({ status: 'failed' });
      expect(fs!.error).to.include({ code: 'RH_ERR_PLUGIN_OPTIONS' });
      expect(fs!.error!.message).to.include(`options/${Object.keys(options)[0]}: must be <=`);
    }
  });
});
