// The plugin as the host sees it: loaded from this package by rousseau-host's loader, checked
// against the tool contract, and called through the host's whole pipeline (validation, policy,
// timeout, output cap): what happens to it in a user's agent.
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
  let host: Host | undefined;
  let server: TestServer | undefined;
  afterEach(async () => {
    await host?.close();
    await server?.close();
    host = server = undefined;
  });

  it('loads and passes the contract check, with api_get only when baseUrl is set', async () => {
    host = await hostWith();
    const [plain] = host.plugins();
    expect(plain, JSON.stringify(plain?.error)).to.include({ status: 'loaded' });
    expect(plain!.warnings ?? []).to.deep.equal([]);
    expect(plain!.tools.map((t) => t.name)).to.deep.equal(['count_words']);
    await host.close();

    host = await hostWith({ options: { baseUrl: 'https://api.example.com' } });
    const [configured] = host.plugins();
    expect(configured, JSON.stringify(configured?.error)).to.include({ status: 'loaded' });
    expect(configured!.tools.map((t) => t.name)).to.have.members(['count_words', 'api_get']);
  });

  it('runs a call through the pipeline, schema defaults applied', async () => {
    host = await hostWith();
    const result = await host.call('count_words', '{"text":"one two two"}');
    expect(result).to.include({ isError: false, content: '3 words, 2 distinct\ntwo: 2\none: 1' });
  });

  it('rejects invalid input before the tool runs, naming the field, so the model can retry', async () => {
    host = await hostWith();
    const wrongType = await host.call('count_words', { text: 42 });
    expect(wrongType).to.include({ isError: true, code: 'invalid_input' });
    expect(wrongType.content).to.include('/text');
    const unknownField = await host.call('count_words', { text: 'a', colour: 'red' });
    expect(unknownField).to.include({ isError: true, code: 'invalid_input' });
    const outOfRange = await host.call('count_words', { text: 'a', top: 500 });
    expect(outOfRange).to.include({ isError: true, code: 'invalid_input' });
    expect(outOfRange.content).to.include('/top');
  });

  it('fails to load with a clear error when the options are invalid, naming the option', async () => {
    host = await hostWith({ options: { baseUrl: 'ftp://nope', maxBytes: 1 } });
    const [plugin] = host.plugins();
    expect(plugin).to.include({ status: 'failed' });
    expect(plugin!.error?.code).to.equal('RH_ERR_PLUGIN_OPTIONS');
    expect(plugin!.error?.message).to.include('options/baseUrl').and.include('options/maxBytes');
  });

  it('times out a call that takes too long, and the tool lets go of its request', async () => {
    server = await startServer(() => {}); // accepts the request, never answers
    host = await hostWith({ options: { baseUrl: server.url }, timeoutMs: 300 });
    const result = await host.call('api_get', { path: '/slow' });
    expect(result).to.include({ isError: true, code: 'timeout' });
    const request = server.requests[0]!;
    if (!request.socket.destroyed) await once(request.socket, 'close'); // the signal reached fetch
  });
});
