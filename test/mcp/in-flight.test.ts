// serve.limits.inFlight against a caller that cancels: a cancelled call is answered at once, yet
// its tool may run on (this one ignores its signal). Its place must be held until the tool has
// stopped, however the call was cancelled, or a caller could cancel and call again past its cap.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { connect as connectSocket } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Host } from '../../core/host.ts';
import { serveMcpHttp } from '../../core/mcp/serve.ts';
import type { Caller } from '../../core/types.ts';
import { FIXTURES, tempDir, until } from '../helpers.ts';
import { allowingHost, text } from './shared.ts';

const IN_FLIGHT = 2;

/** The caller named by the `x-test-caller` header. */
function authenticate(req: IncomingMessage): Caller | undefined {
  const name = req.headers['x-test-caller'];
  return typeof name === 'string' ? { name, scopes: [], via: 'token' } : undefined;
}

describe('MCP HTTP: inFlight places outlast cancelled calls', function () {
  this.timeout(30_000);
  const tmp = tempDir('rh-mcp-in-flight-');
  let host: Host;
  let session: { url: string; close(): Promise<void> };
  let stateless: { url: string; close(): Promise<void> };
  const clients: Client[] = [];
  /** `tool:code` of every call that ended, as the host tells it. */
  const ended: string[] = [];
  /** Every release file a call waits for: a test that fails still lets its tools stop. */
  const gates = new Set<string>();

  before(async () => {
    host = await allowingHost([
      { module: join(FIXTURES, 'mcp', 'stubborn.ts'), isolation: 'inline', options: { dir: tmp.dir } },
      { module: join(FIXTURES, 'mcp', 'tools.ts'), isolation: 'inline' },
    ]);
    host.onCallEnd((end) => ended.push(`${end.tool}:${end.result.code ?? 'ok'}`));
    const limits = { inFlight: IN_FLIGHT };
    session = await serveMcpHttp(host, { port: 0, authenticate, limits });
    stateless = await serveMcpHttp(host, { port: 0, authenticate, limits, stateless: true });
  });

  after(async () => {
    for (const gate of gates) release(gate);
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all([session.close(), stateless.close()]);
    await host.close();
    tmp.cleanup();
  });

  const running = () => host.load().find((l) => l.plugin === 'stubborn')?.running;
  const release = (name: string) => writeFileSync(join(tmp.dir, name), '');
  const gate = (name: string) => {
    gates.add(name);
    return { release: name };
  };
  const cancelledSoFar = () => ended.filter((e) => e === 'stubborn:cancelled').length;

  async function connect(caller: string): Promise<Client> {
    const client = new Client({ name: `client-${caller}`, version: '1.0.0' });
    const headers = { 'x-test-caller': caller };
    await client.connect(new StreamableHTTPClientTransport(new URL(session.url), { requestInit: { headers } }));
    clients.push(client);
    return client;
  }

  /** One `tools/call` as a raw POST to the stateless server. */
  function post(caller: string, name: string, args: Record<string, unknown>, signal?: AbortSignal) {
    return fetch(stateless.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-test-caller': caller,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      ...(signal ? { signal } : {}),
    });
  }

  /** What an echo call by `client` gets: `ok`, or the status of the error the client threw. */
  const echo = (client: Client) =>
    client.callTool({ name: 'echo', arguments: { text: 'hi' } }).then(
      (r) => `ok: ${text(r)}`,
      (error: Error & { code?: unknown }) => `${error.code}: ${error.message}`,
    );

  /** Starts `IN_FLIGHT` stubborn calls of `client` that wait for `file`; resolves once all run. */
  async function fillUp(client: Client, file: string) {
    const before = running() ?? 0;
    const cancels = Array.from({ length: IN_FLIGHT }, () => new AbortController());
    const calls = cancels.map((c) =>
      client
        .callTool({ name: 'stubborn', arguments: gate(file) }, undefined, { signal: c.signal })
        .catch((error: Error) => error.message),
    );
    await until(() => running() === before + IN_FLIGHT, { message: 'the stubborn calls to run' });
    const cancel = () => {
      for (const c of cancels) c.abort();
    };
    return { cancel, calls };
  }

  it("host.call's onRun: told when the tool starts, and when it stops, after the answer of a call cancelled; never for a tool that did not run", async () => {
    const told: string[] = [];
    const onRun = () => {
      told.push('started');
      return () => told.push('stopped');
    };
    const cancel = new AbortController();
    const call = host.call('stubborn', gate('hook'), { signal: cancel.signal, onRun });
    await until(() => running() === 1, { message: 'the tool to run' });
    cancel.abort();
    expect((await call).code).to.equal('cancelled');
    expect(told, 'answered, the tool running on').to.deep.equal(['started']);
    release('hook');
    await until(() => told.length === 2, { message: 'the tool to stop' });
    expect(told).to.deep.equal(['started', 'stopped']);
    expect((await host.call('echo', { text: 'hi' }, { onRun })).content).to.equal('hi');
    expect(told.slice(2), 'a call that ran to its end').to.deep.equal(['started', 'stopped']);
    expect((await host.call('nope', {}, { onRun })).code).to.equal('unknown_tool');
    expect((await host.call('echo', { text: 1 }, { onRun })).code).to.equal('invalid_input');
    expect(told, 'no run, no word').to.have.length(4);
  });

  it('notifications/cancelled: the place is held until the tool has stopped, not given back with the answer', async () => {
    const ann = await connect('ann');
    const cancelled = cancelledSoFar();
    const full = await fillUp(ann, 'cancel');
    full.cancel();
    await Promise.all(full.calls);
    await until(() => cancelledSoFar() === cancelled + IN_FLIGHT, { message: 'the host to answer both cancelled' });
    expect(running(), 'the tools ignore their signal').to.equal(IN_FLIGHT);
    expect(await echo(ann))
      .to.match(/^429: /)
      .and.include(`${IN_FLIGHT} running now`);
    release('cancel');
    await until(() => running() === 0, { message: 'the tools to stop' });
    expect(await echo(ann)).to.equal('ok: hi');
  });

  it('DELETE of the session: its calls are cancelled, their places held until their tools stop', async () => {
    const ben = await connect('ben');
    const cancelled = cancelledSoFar();
    const full = await fillUp(ben, 'delete');
    await (ben.transport as StreamableHTTPClientTransport).terminateSession();
    await until(() => cancelledSoFar() === cancelled + IN_FLIGHT, { message: 'the session end to cancel both' });
    const again = await connect('ben');
    expect(await echo(again)).to.match(/^429: /);
    release('delete');
    await until(() => running() === 0, { message: 'the tools to stop' });
    expect(await echo(again)).to.equal('ok: hi');
    await ben.close();
    await Promise.all(full.calls);
  });

  it('stateless, a dropped request: the place is held until the tool stops', async () => {
    const cancelled = cancelledSoFar();
    const drops = Array.from({ length: IN_FLIGHT }, () => new AbortController());
    const responses = await Promise.all(drops.map((d) => post('cat', 'stubborn', gate('drop'), d.signal)));
    expect(responses.map((r) => r.status)).to.deep.equal(drops.map(() => 200));
    await until(() => running() === IN_FLIGHT, { message: 'the stubborn calls to run' });
    for (const d of drops) d.abort();
    await until(() => cancelledSoFar() === cancelled + IN_FLIGHT, { message: 'the dropped requests to cancel both' });
    const refused = await post('cat', 'echo', { text: 'hi' });
    expect(refused.status).to.equal(429);
    expect(await refused.text()).to.include('serve.limits.inFlight');
    release('drop');
    await until(() => running() === 0, { message: 'the tools to stop' });
    expect((await post('cat', 'echo', { text: 'hi' })).status).to.equal(200);
  });

  it('a batch dropped: each of its calls holds its place until its own tool stops', async () => {
    const cancelled = cancelledSoFar();
    const drop = new AbortController();
    const batch = Array.from({ length: IN_FLIGHT }, (_, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: 'stubborn', arguments: gate(`batch-${i}`) },
    }));
    const response = await fetch(stateless.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-test-caller': 'fay',
      },
      body: JSON.stringify(batch),
      signal: drop.signal,
    });
    expect(response.status).to.equal(200);
    await until(() => running() === IN_FLIGHT, { message: 'the batch to run' });
    drop.abort();
    await until(() => cancelledSoFar() === cancelled + IN_FLIGHT, { message: 'the dropped batch to cancel its calls' });
    release('batch-0');
    await until(() => running() === IN_FLIGHT - 1, { message: 'one tool to stop' });
    const one = await post('fay', 'stubborn', gate('batch-next'));
    expect(one.status, 'one place is free').to.equal(200);
    await until(() => running() === IN_FLIGHT, { message: 'the next call to run' });
    expect((await post('fay', 'echo', { text: 'hi' })).status, 'and only one').to.equal(429);
    for (let i = 1; i < IN_FLIGHT; i++) release(`batch-${i}`);
    release('batch-next');
    await one.text();
    await until(() => running() === 0, { message: 'the tools to stop' });
  });

  it('requests dropped as soon as sent: a call that runs on in the session holds its place, one refused gives it back', async () => {
    const eve = await connect('eve');
    const sessionId = (eve.transport as StreamableHTTPClientTransport).sessionId!;
    const { port } = new URL(session.url);
    const drop = (id: number, to = sessionId) =>
      new Promise<void>((resolve, reject) => {
        const body = JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'stubborn', arguments: gate('dropped') },
        });
        const socket = connectSocket(Number(port), '127.0.0.1', () => {
          socket.end(
            [
              'POST /mcp HTTP/1.1',
              `Host: 127.0.0.1:${port}`,
              'Content-Type: application/json',
              'Accept: application/json, text/event-stream',
              'X-Test-Caller: eve',
              `Mcp-Session-Id: ${to}`,
              `Content-Length: ${Buffer.byteLength(body)}`,
              '',
              body,
            ].join('\r\n'),
          );
          socket.destroy();
          resolve();
        });
        socket.on('error', reject);
      });
    for (let i = 0; i < 3 * IN_FLIGHT; i++) await drop(100 + i);
    await until(() => (running() ?? 0) >= 1, { message: 'a dropped call to run' });
    // Whatever reached the host in the meantime, it ran within the cap.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(running()).to.be.at.most(IN_FLIGHT);
    release('dropped');
    await until(() => running() === 0, { message: 'the tools to stop' });
    // Calls the transport refuses (an unknown session) never start: their places come back.
    for (let i = 0; i < 3 * IN_FLIGHT; i++) await drop(200 + i, 'no-such-session');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const full = await fillUp(eve, 'dropped-after');
    expect(await echo(eve)).to.match(/^429: /);
    release('dropped-after');
    await Promise.all(full.calls);
    expect(await echo(eve)).to.equal('ok: hi');
  });

  it('cancel and call again, over and over, every way: no place leaks, the cap is whole again after', async () => {
    for (let round = 0; round < 3; round++) {
      const cancelled = cancelledSoFar();
      const name = `round-${round}`;
      // Cancelled by notification, then by ending the session, then by dropping a stateless request.
      const dee = await connect('dee');
      const byNotice = await fillUp(dee, name);
      byNotice.cancel();
      await until(() => cancelledSoFar() === cancelled + IN_FLIGHT);
      release(name);
      await until(() => running() === 0);

      const bySession = await fillUp(dee, `${name}-delete`);
      await (dee.transport as StreamableHTTPClientTransport).terminateSession();
      await until(() => cancelledSoFar() === cancelled + 2 * IN_FLIGHT);
      release(`${name}-delete`);
      await until(() => running() === 0);
      await dee.close();
      await Promise.all([...byNotice.calls, ...bySession.calls]);

      const drop = new AbortController();
      await post('dee', 'stubborn', gate(`${name}-drop`), drop.signal);
      await until(() => running() === 1);
      drop.abort();
      await until(() => cancelledSoFar() === cancelled + 2 * IN_FLIGHT + 1);
      release(`${name}-drop`);
      await until(() => running() === 0);
    }
    // Back to zero: the caller may run its whole cap at once again, and no more.
    const dee = await connect('dee');
    const full = await fillUp(dee, 'last');
    expect(await echo(dee)).to.match(/^429: /);
    release('last');
    expect((await Promise.all(full.calls)).map(text)).to.deep.equal(full.calls.map(() => 'released'));
    expect(await echo(dee)).to.equal('ok: hi');
  });
});
