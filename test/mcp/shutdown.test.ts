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
