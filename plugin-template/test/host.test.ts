// The plugin as the host sees it: loaded from this package by rousseau-host's own loader (in a
// worker thread, the default for plugins), checked against the tool contract, and called through
// the host's whole pipeline (validation, policy, timeout, output cap), as in a user's agent.
import { expect } from 'chai';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createHost, type Host } from 'rousseau-host';
import { startServer, type TestServer } from './server.ts';

const pluginDir = fileURLToPath(new URL('..', import.meta.url));

/** A host that loads only this plugin, with these options and settings. */
function hostWith(entry: { options?: unknown; timeoutMs?: number } = {}): Promise<Host> {
  return createHost({
    cwd: pluginDir,
    config: { builtins: false, plugins: [{ module: pluginDir, ...entry }], policy: { default: 'allow' } },
    audit: false,
    logLevel: 'error',
  });
}

describe('through the host', () => {
  let server: TestServer;
  let host: Host;
  before(async () => {
    // /slow accepts the request and never answers; anything else gets a small JSON body.
    server = await startServer((req, res) => {
      if (req.url !== '/slow') res.end('{"ok":true}');
    });
    host = await hostWith({ options: { baseUrl: server.url }, timeoutMs: 2000 });
  });
  after(async () => {
    await host?.close();
    await server?.close();
  });

  it('loads and passes the contract check, with no warnings', () => {
    const [plugin] = host.plugins();
    expect(plugin, JSON.stringify(plugin?.error)).to.include({ status: 'loaded' });
    expect(plugin!.warnings ?? []).to.deep.equal([]);
    expect(plugin!.tools.map((t) => t.name)).to.have.members(['count_words', 'api_get']);
  });

  it('runs calls through the pipeline, schema defaults applied', async () => {
    expect(await host.call('count_words', '{"text":"one two two"}')).to.include({
      isError: false,
      content: '3 words, 2 distinct\ntwo: 2\none: 1',
    });
    expect(await host.call('api_get', { path: '/status' })).to.include({
      isError: false,
      content: 'HTTP 200 OK\n{"ok":true}',
    });
  });

  it('rejects invalid input before the tool runs, naming the field, so the model can retry', async () => {
    const wrongType = await host.call('count_words', { text: 42 });
    expect(wrongType).to.include({ isError: true, code: 'invalid_input' });
    expect(wrongType.content).to.include('/text');
    const unknownField = await host.call('count_words', { text: 'a', colour: 'red' });
    expect(unknownField).to.include({ isError: true, code: 'invalid_input' });
    const otherHost = await host.call('api_get', { path: '//evil.example/' });
    expect(otherHost).to.include({ isError: true, code: 'invalid_input' });
    expect(otherHost.content).to.include('/path');
  });

  it('times out a call that takes too long, and the request does not linger', async () => {
    const result = await host.call('api_get', { path: '/slow' });
    expect(result).to.include({ isError: true, code: 'timeout' });
    const request = server.requests.find((r) => r.url === '/slow')!;
    // Closed by the aborted signal, or by the host ending the worker: either way nothing is left open.
    if (!request.socket.destroyed) await once(request.socket, 'close');
  });

  it('offers api_get only when options.baseUrl is set', async () => {
    const plain = await hostWith();
    try {
      expect(plain.plugins()[0]!.tools.map((t) => t.name)).to.deep.equal(['count_words']);
    } finally {
      await plain.close();
    }
  });

  it('fails to load, naming each bad option, when the options are invalid', async () => {
    const broken = await hostWith({ options: { baseUrl: 'ftp://nope', maxBytes: 1 } });
    try {
      const [plugin] = broken.plugins();
      expect(plugin).to.include({ status: 'failed' });
      expect(plugin!.error?.code).to.equal('RH_ERR_PLUGIN_OPTIONS');
      expect(plugin!.error?.message).to.include('options/baseUrl').and.include('options/maxBytes');
    } finally {
      await broken.close();
    }
  });
});
