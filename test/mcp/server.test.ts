// tools/call is registered past the SDK `Server`'s own `setRequestHandler` (core/mcp/server.ts).
// These tests fail if the SDK changes under that choice: if the protocol layer stops parsing the
// request itself, or if the wrapper skipped would have changed a result on the wire; and an SDK
// upgrade fails the version check, so the wrapper is read again, and with it what the stdio path
// relies on: the message schemas core/mcp/shapes.ts mirrors and `Protocol._onrequest` (stdio.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'chai';
import type { Host } from '../../core/host.ts';
import { createMcpServer } from '../../core/mcp/server.ts';
import { FIXTURES, ROOT } from '../helpers.ts';
import { allowingHost, text } from './shared.ts';

describe('MCP server: tools/call past the SDK Server wrapper', () => {
  let host: Host;
  let server: Server;
  let client: Client;
  /** Every message the server sent, as it crossed the transport. */
  const wire: JSONRPCMessage[] = [];
  let calls = 0;

  before(async () => {
    host = await allowingHost([{ module: join(FIXTURES, 'mcp', 'tools.ts'), isolation: 'inline' }]);
    host.onCallEnd(() => calls++);
    server = createMcpServer(host, { listChanged: false });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: 'test', version: '1.0.0' });
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    const deliver = clientSide.onmessage!;
    clientSide.onmessage = (message, extra) => {
      wire.push(message);
      deliver(message, extra);
    };
  });

  after(async () => {
    await client.close();
    await server.close();
    await host.close();
  });

  it("sends results the SDK's result schema passes unchanged, so the skipped check would change nothing", async () => {
    wire.length = 0;
    await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    await client.callTool({ name: 'fail', arguments: { message: 'boom' } });
    await client.callTool({ name: 'echo', arguments: { text: 42 } });
    await client.callTool({ name: 'no-such-tool', arguments: {} });
    const results = wire.flatMap((m) => ('result' in m ? [m.result] : []));
    expect(results).to.have.length(4);
    for (const result of results) expect(CallToolResultSchema.parse(result)).to.deep.equal(result);
    expect(results.map((r) => r.isError ?? false)).to.deep.equal([false, true, true, true]);
    expect(text(results[0])).to.equal('hi');
  });

  it('refuses a malformed tools/call in the protocol layer, before the host sees a call', async () => {
    const before = calls;
    const refused = await client
      .request({ method: 'tools/call', params: { name: 42 } } as never, CallToolResultSchema)
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).to.be.an('error');
    expect(calls).to.equal(before);
  });

  it('runs on the SDK version whose Server wrapper was read', () => {
    // The SDK changed: read `Server.prototype.setRequestHandler` in its server/index.js again. If
    // its tools/call wrapper still only parses the request again and the result once more, update
    // the version here; if it does more, register tools/call through it (core/mcp/server.ts). Read
    // also `JSONRPCRequestSchema`, `RequestMetaSchema` and `CallToolRequestParamsSchema` in types.js
    // (core/mcp/shapes.ts accepts a subset of them) and `Protocol` `connect` and `_onrequest` in
    // shared/protocol.js (core/mcp/stdio.ts hands plain requests to `_onrequest`), and `Server`'s
    // constructor and `_oninitialize` with `InitializeRequestSchema` (core/mcp/handshake.ts answers
    // the handshake as they do before the SDK loads).
    const manifest = join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json');
    expect((JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version).to.equal('1.32.2');
  });
});
