// `start --mcp` answers the handshake in plain code before the SDK loads (core/mcp/handshake.ts):
// each message it takes must be one the SDK takes, answered exactly as the host's SDK server answers
// it; and the SDK's answers to the handshake read again are dropped, a different one reported.
import { expect } from 'chai';
import fc from 'fast-check';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  InitializedNotificationSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import type { Host } from '../../core/host.ts';
import * as handshake from '../../core/mcp/handshake.ts';
import { createMcpServer } from '../../core/mcp/server.ts';

/** Values a field takes, the awkward ones included. */
const field = fc.oneof(
  fc.constantFrom('2025-06-18', '1999-01-01', '', 1, null, true, [], {}, { listChanged: 'yes' }),
  fc.string(),
  fc.dictionary(fc.constantFrom('listChanged', 'form', 'url', 'applyDefaults', 'context', 'x'), fc.jsonValue()),
);
const mostly = <T>(good: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: good, weight: 4 }, { arbitrary: field as fc.Arbitrary<unknown>, weight: 1 });
const sometimes = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 3 });
const capability = mostly(
  fc.record({
    listChanged: sometimes(mostly(fc.boolean())),
    form: sometimes(mostly(fc.record({ applyDefaults: sometimes(mostly(fc.boolean())) }))),
    url: sometimes(field),
    context: sometimes(field),
    tools: sometimes(field),
  }),
);
const initialize = fc.record({
  jsonrpc: mostly(fc.constant('2.0')),
  id: mostly(fc.oneof(fc.integer(), fc.string())),
  method: mostly(fc.constantFrom('initialize', 'ping')),
  params: sometimes(
    mostly(
      fc.record({
        protocolVersion: mostly(fc.constantFrom(...SUPPORTED_PROTOCOL_VERSIONS, '2099-01-01')),
        capabilities: mostly(
          fc.dictionary(
            fc.constantFrom('roots', 'sampling', 'elicitation', 'experimental', 'tasks', 'other'),
            capability,
          ),
        ),
        clientInfo: mostly(
          fc.record({
            name: mostly(fc.string()),
            version: mostly(fc.string()),
            title: sometimes(field),
            icons: sometimes(field),
          }),
        ),
        _meta: sometimes(mostly(fc.record({ progressToken: sometimes(field) }))),
      }),
    ),
  ),
});
const arriving = initialize.map((m) => JSON.parse(JSON.stringify(m)) as unknown);

/** The host's SDK server (its host never loads: the handshake needs none) and a raw JSON-RPC line to it. */
async function sdkServer() {
  const [client, server] = InMemoryTransport.createLinkedPair();
  await createMcpServer(new Promise<Host>(() => {}), { listChanged: true }).connect(server);
  const waiting = new Map<unknown, (message: JSONRPCMessage) => void>();
  client.onmessage = (message) => waiting.get((message as { id?: unknown }).id)?.(message);
  await client.start();
  let next = 0;
  return {
    /** The SDK's answer to `message`, sent under an id of its own. */
    answer(message: object): Promise<JSONRPCMessage> {
      const id = `t-${next++}`;
      const answered = new Promise<JSONRPCMessage>((resolve) => waiting.set(id, resolve));
      void client.send({ ...message, id } as JSONRPCMessage);
      return answered;
    },
  };
}

describe('MCP handshake in plain code (start --mcp before the SDK loads)', () => {
  it('negotiates with the SDK’s protocol versions', () => {
    expect(handshake.LATEST_PROTOCOL_VERSION).to.equal(LATEST_PROTOCOL_VERSION);
    expect(handshake.SUPPORTED_PROTOCOL_VERSIONS).to.deep.equal(SUPPORTED_PROTOCOL_VERSIONS);
  });

  it('takes only requests the SDK takes, and answers each as the host’s SDK server does', async () => {
    const sdk = await sdkServer();
    const taken: Array<{ message: unknown; ours: unknown }> = [];
    fc.assert(
      fc.property(arriving, (m) => {
        const read = handshake.readHandshake(m, true);
        if (!read) return;
        expect(read.method).to.be.oneOf(['initialize', 'ping']);
        expect(JSONRPCRequestSchema.safeParse(m).success, JSON.stringify(m)).to.equal(true);
        taken.push({ message: m, ours: 'result' in read ? read.result : {} });
      }),
      {
        numRuns: 1500,
        // One of each kind for certain: a run's random messages may hold no initialize the SDK takes.
        examples: [
          [
            {
              jsonrpc: '2.0',
              id: 1,
              method: 'initialize',
              params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
            },
          ],
          [{ jsonrpc: '2.0', id: 2, method: 'ping' }],
        ],
      },
    );
    // Enough of them, both kinds, for the comparison to mean something.
    const methods = new Set(taken.map(({ message }) => (message as { method: string }).method));
    expect(methods).to.deep.equal(new Set(['initialize', 'ping']));
    expect(taken.length).to.be.above(100);
    for (const { message, ours } of taken) {
      const answer = await sdk.answer(message as object);
      expect('result' in answer && answer.result, JSON.stringify(message)).to.deep.equal(ours);
    }
  });

  it('answers the initialize requests clients send, a version the SDK does not support with its latest', async () => {
    const sdk = await sdkServer();
    const clients = [
      { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
      {
        protocolVersion: '2025-11-25',
        capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: { form: {}, url: {} } },
        clientInfo: { name: 'claude-code', version: '2.0.0', title: 'Claude Code' },
      },
      { protocolVersion: '1999-01-01', capabilities: { elicitation: {} }, clientInfo: { name: 'old', version: '0' } },
    ];
    for (const params of clients) {
      const message = { jsonrpc: '2.0', id: 1, method: 'initialize', params };
      const read = handshake.readHandshake(message, true);
      expect(read, JSON.stringify(params)).to.have.property('result');
      const answer = await sdk.answer(message);
      expect('result' in answer && answer.result).to.deep.equal((read as { result: unknown }).result);
    }
    const old = handshake.readHandshake({ jsonrpc: '2.0', id: 1, method: 'initialize', params: clients[2] }, true);
    expect((old as { result: { protocolVersion: string } }).result.protocolVersion).to.equal(LATEST_PROTOCOL_VERSION);
  });

  it('leaves to the SDK what it cannot answer as the SDK would', () => {
    const valid = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } };
    const refused = [
      [{ jsonrpc: '2.0', id: 1, method: 'initialize', params: valid }], // a batch
      { jsonrpc: '2.0', id: 1, method: 'initialize' },
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { ...valid, clientInfo: { name: 'c' } } },
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { ...valid, capabilities: { tasks: {} } } },
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { ...valid, capabilities: { roots: { listChanged: 1 } } },
      },
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: valid, extra: true },
      { jsonrpc: '2.0', method: 'notifications/initialized', id: 2 },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
    ];
    for (const message of refused)
      expect(handshake.readHandshake(message, true), JSON.stringify(message)).to.equal(undefined);
  });

  it('remembers notifications/initialized as the SDK reads it', () => {
    for (const message of [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', method: 'notifications/initialized', params: { _meta: { progressToken: 1 } } },
    ]) {
      expect(handshake.readHandshake(message, true)).to.deep.equal({ method: 'notifications/initialized' });
      expect(JSONRPCNotificationSchema.safeParse(message).success).to.equal(true);
      expect(InitializedNotificationSchema.safeParse(message).success).to.equal(true);
    }
  });

  it('drops the SDK’s answers to the handshake read again, reports one that differs, and passes the rest', async () => {
    const sent: unknown[] = [];
    const transport = {
      send: async (message: JSONRPCMessage) => void sent.push(message),
    } as unknown as Transport;
    const own = transport.send;
    const mismatches: string[][] = [];
    const answers = new Map<string, unknown>([
      ['r-1', { protocolVersion: '2025-06-18' }],
      ['r-2', { protocolVersion: '2025-11-25' }],
    ]);
    handshake.dropReplayAnswers(transport, answers, (ours, sdks) => mismatches.push([ours, sdks]));
    await transport.send({ jsonrpc: '2.0', id: 'r-1', result: { protocolVersion: '2025-06-18' } });
    await transport.send({ jsonrpc: '2.0', id: 7, result: {} });
    expect(transport.send).to.not.equal(own);
    await transport.send({ jsonrpc: '2.0', id: 'r-2', error: { code: -32602, message: 'Invalid params' } });
    expect(sent).to.deep.equal([{ jsonrpc: '2.0', id: 7, result: {} }]);
    expect(mismatches).to.deep.equal([
      [
        '{"protocolVersion":"2025-11-25"}',
        '{"jsonrpc":"2.0","id":"r-2","error":{"code":-32602,"message":"Invalid params"}}',
      ],
    ]);
    expect(transport.send, 'its own send is back').to.equal(own);
  });
});
