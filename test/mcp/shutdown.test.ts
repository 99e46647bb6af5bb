// serveMcpHttp's graceful close: the call in flight is answered, a request that comes after the close
// began gets 503 on the connection it shares with that call, and new connections are refused.
import { expect } from 'chai';
import { connect as connectTcp } from 'node:net';
import { serveMcpHttp } from '../../core/mcp/serve.ts';
import { allowingHost } from './shared.ts';

/** A raw HTTP/1.1 request calling `slow`: raw, so the test picks the connection it travels on. */
function slowCall(host: string, id: number, ms: number): string {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'slow', arguments: { ms, tag: `call ${id}` } },
  });
  return [
    'POST /mcp HTTP/1.1',
    `Host: ${host}`,
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}

describe('serveMcpHttp: close(graceMs)', function () {
  this.timeout(20_000);

  it('answers the call in flight, refuses new connections, and answers a later request on its connection 503', async () => {
    const host = await allowingHost([{ module: '../plugins/kit.ts', isolation: 'inline' }]);
    try {
      const server = await serveMcpHttp(host, { port: 0, stateless: true });
      const { host: authority, port } = new URL(server.url);
      const socket = connectTcp(Number(port), '127.0.0.1');
      let received = '';
      socket.on('data', (d: Buffer) => (received += d.toString()));
      const ended = new Promise((resolve) => socket.on('close', resolve));
      socket.write(slowCall(authority, 1, 1000));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const closed = server.close(10_000);
      // The same connection, busy with call 1, carries one more request after the close began.
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.write(slowCall(authority, 2, 10));
      const refused = await fetch(server.url, { method: 'POST' }).then(
        () => 'served',
        (error: Error) => String((error.cause as Error | undefined)?.message ?? error),
      );
      expect(refused).to.match(/ECONNREFUSED/);
      await closed;
      await ended;
      expect(received).to.include('"text":"call 1"');
      expect(received).to.match(/HTTP\/1\.1 503 [\s\S]*shutting down/);
      expect(received).to.not.include('"text":"call 2"');
    } finally {
      await host.close();
    }
  });
});

describe('serveMcpHttp: close() while a request is being authenticated', function () {
  this.timeout(20_000);

  it('opens no session for it once closed, and answers it 503 when its connection is still there', async () => {
    const host = await allowingHost([{ module: '../plugins/kit.ts', isolation: 'inline' }]);
    try {
      // An authentication that waits, as one fetching the issuer's key set does.
      let arrived!: () => void;
      const asked = new Promise<void>((resolve) => (arrived = resolve));
      let pass!: () => void;
      const passed = new Promise<void>((resolve) => (pass = resolve));
      const server = await serveMcpHttp(host, {
        port: 0,
        authenticate: async () => {
          arrived();
          await passed;
          return { name: 'alice', scopes: [], via: 'token' };
        },
      });
      const answer = fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        }),
      }).then(
        (res) => res.status,
        () => 'connection closed',
      );
      await asked;
      const closed = server.close();
      pass();
      await closed;
      expect(await answer).to.be.oneOf([503, 'connection closed']);
      // Give a session the request might have opened time to register.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(server.sessions()).to.equal(0);
    } finally {
      await host.close();
    }
  });
});
