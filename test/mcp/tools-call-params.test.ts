// tools/call is registered past the SDK Server's wrapper (core/mcp/server.ts): its request params
// must still be checked as the SDK checked them, a malformed request answered with JSON-RPC's
// "Invalid params" (-32602), never run and never taken for an internal error.
import { expect } from 'chai';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Host } from '../../core/host.ts';
import { createMcpServer } from '../../core/mcp/server.ts';
import { allowingHost, text } from './shared.ts';

describe('MCP server: tools/call request params', () => {
  let host: Host;
  let client: InMemoryTransport;
  const answers = new Map<number, JSONRPCMessage>();
  let nextId = 1;

  before(async () => {
    host = await allowingHost([{ module: './tools.ts', isolation: 'inline' }]);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    client = clientSide;
    client.onmessage = (message) => {
      if ('id' in message && typeof message.id === 'number') answers.set(message.id, message);
    };
    await createMcpServer(host, { listChanged: false }).connect(serverSide);
    await client.start();
  });

  after(async () => {
    await client.close();
    await host.close();
  });

  /** Sends one request with these params and waits for its answer. */
  async function request(method: string, params: unknown): Promise<JSONRPCMessage> {
    const id = nextId++;
    await client.send({ jsonrpc: '2.0', id, method, params } as JSONRPCMessage);
    for (let i = 0; i < 200 && !answers.has(id); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(answers.has(id), `no answer to ${JSON.stringify(params)}`).to.equal(true);
    return answers.get(id)!;
  }

  it('a call with well-formed params runs', async () => {
    const answer = await request('tools/call', { name: 'echo', arguments: { text: 'hi' } });
    expect(text((answer as { result: unknown }).result)).to.contain('hi');
  });

  for (const [what, params, wrong] of [
    ['without a name', { arguments: {} }, '"name"'],
    ['with a name that is not a string', { name: 42, arguments: {} }, '"name"'],
    ['with arguments that are not an object', { name: 'echo', arguments: 'text' }, '"arguments"'],
    ['with no params at all', undefined, '"params"'],
  ] as const) {
    it(`a call ${what} is answered "Invalid params" (-32602), naming what was wrong`, async () => {
      const answer = (await request('tools/call', params)) as { error?: { code: number; message: string } };
      expect(answer.error?.code, JSON.stringify(answer)).to.equal(-32602);
      expect(answer.error?.message).to.match(/^MCP error -32602: Invalid tools\/call request: /);
      expect(answer.error?.message).to.contain(wrong);
    });
  }
});
