// The conformance fixture (test/fixtures/conformance) served over Streamable HTTP with sessions and
// driven by the SDK's client: the results the official MCP conformance suite checks (`npm run
// conformance` runs the suite itself, which CI does not download), so a change that would fail a
// scenario fails here first.
import { expect } from 'chai';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CallToolResult,
  CreateMessageRequestSchema,
  type CreateMessageRequest,
  type ElicitRequestFormParams,
  ElicitRequestSchema,
  type LoggingMessageNotification,
  LoggingMessageNotificationSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { createHost, type Host } from '../../core/host.ts';
import { serveMcpHttp } from '../../core/mcp/serve.ts';
import { PNG, SCHEMA_2020_12, WAV } from '../fixtures/conformance/plugin.ts';
import { FIXTURES, until } from '../helpers.ts';

/** Every tool a scenario of the suite calls. */
const SUITE_TOOLS = [
  'json_schema_2020_12_tool',
  'test_audio_content',
  'test_elicitation',
  'test_elicitation_sep1034_defaults',
  'test_elicitation_sep1330_enums',
  'test_embedded_resource',
  'test_error_handling',
  'test_image_content',
  'test_multiple_content_types',
  'test_reconnection',
  'test_sampling',
  'test_simple_text',
  'test_tool_with_logging',
  'test_tool_with_progress',
];

const textOf = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

describe('the conformance fixture over MCP (HTTP with sessions)', function () {
  this.timeout(30_000);
  let host: Host;
  let server: Awaited<ReturnType<typeof serveMcpHttp>>;
  const clients: Client[] = [];
  const asked: ElicitRequestFormParams[] = [];
  const sampled: CreateMessageRequest['params'][] = [];

  /** A client as the suite's: it declares sampling and elicitation, and answers both. */
  async function connect(): Promise<Client> {
    const client = new Client(
      { name: 'conformance-like', version: '1.0.0' },
      { capabilities: { sampling: {}, elicitation: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params as ElicitRequestFormParams);
      return { action: 'accept', content: { username: 'testuser', email: 'test@example.com' } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      sampled.push(request.params);
      return {
        role: 'assistant',
        content: { type: 'text', text: 'This is a test response from the client' },
        model: 'test-model',
        stopReason: 'endTurn',
      };
    });
    const transport = new StreamableHTTPClientTransport(new URL(server.url));
    await client.connect(transport);
    expect(transport.sessionId, 'a session id').to.be.a('string');
    clients.push(client);
    return client;
  }

  before(async () => {
    host = await createHost({ cwd: join(FIXTURES, 'conformance'), logLevel: 'error' });
    server = await serveMcpHttp(host, { port: 0 });
  });
  after(async () => {
    for (const client of clients) await client.close();
    await server.close();
    await host.close();
  });

  it('lists every tool the suite calls, and the 2020-12 input schema as written: $schema, $defs, $ref, additionalProperties', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).to.include.members(SUITE_TOOLS);
    const schemaTool = tools.find((t) => t.name === 'json_schema_2020_12_tool')!;
    expect(schemaTool.inputSchema).to.deep.equal(SCHEMA_2020_12);
  });

  it('checks input against the $defs a $ref names, and refuses keys additionalProperties: false leaves out', async () => {
    const client = await connect();
    const call = (args: Record<string, unknown>) =>
      client.callTool({ name: 'json_schema_2020_12_tool', arguments: args });
    const good = { name: 'Ada', address: { street: '1 Main St', city: 'Springfield' } };
    expect(JSON.parse(textOf(await call(good)))).to.deep.equal(good);
    const badCity = await call({ address: { city: 3 } });
    expect(badCity.isError).to.equal(true);
    expect(textOf(badCity)).to.include('/address/city: must be string');
    const extra = await call({ name: 'Ada', nickname: 'A' });
    expect(extra.isError).to.equal(true);
    expect(textOf(extra)).to.include('/nickname: unknown key');
  });

  it('serves text, image, audio, embedded-resource and mixed blocks unchanged', async () => {
    const client = await connect();
    const content = async (name: string) => (await client.callTool({ name, arguments: {} })).content;
    expect(await content('test_simple_text')).to.deep.equal([
      { type: 'text', text: 'This is a simple text response for testing.' },
    ]);
    expect(await content('test_image_content')).to.deep.equal([{ type: 'image', data: PNG, mimeType: 'image/png' }]);
    expect(await content('test_audio_content')).to.deep.equal([{ type: 'audio', data: WAV, mimeType: 'audio/wav' }]);
    expect(await content('test_embedded_resource')).to.deep.equal([
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ]);
    const mixed = (await content('test_multiple_content_types')) as { type: string }[];
    expect(mixed.map((b) => b.type)).to.deep.equal(['text', 'image', 'resource']);
    expect(mixed[2]).to.deep.equal({
      type: 'resource',
      resource: {
        uri: 'test://mixed-content-resource',
        mimeType: 'application/json',
        text: '{"test":"data","value":123}',
      },
    });
  });

  it('sends the three log lines of a call as notifications/message once the client set debug', async () => {
    const client = await connect();
    const logs: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    await client.setLoggingLevel('debug');
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    await until(() => logs.length >= 3, { message: () => `3 log notifications, got ${logs.length}` });
    expect(logs.map((l) => [l.level, l.logger, l.data])).to.deep.equal([
      ['info', 'test_tool_with_logging', 'Tool execution started'],
      ['info', 'test_tool_with_logging', 'Tool processing data'],
      ['info', 'test_tool_with_logging', 'Tool execution completed'],
    ]);
  });

  it('reports progress 0, 50 and 100 of 100 before the result', async () => {
    const client = await connect();
    const progress: Progress[] = [];
    const result = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
      onprogress: (p) => void progress.push(p),
    });
    expect(result.isError).to.not.equal(true);
    expect(progress.map((p) => [p.progress, p.total])).to.deep.equal([
      [0, 100],
      [50, 100],
      [100, 100],
    ]);
  });

  it('answers a throwing tool with isError and its message', async () => {
    const client = await connect();
    const result = await client.callTool({ name: 'test_error_handling', arguments: {} });
    expect(result.isError).to.equal(true);
    expect(textOf(result)).to.include('This tool intentionally returns an error for testing');
  });

  it('asks the client with elicitation/create and returns its answer', async () => {
    const client = await connect();
    asked.length = 0;
    const result = await client.callTool({
      name: 'test_elicitation',
      arguments: { message: 'Please provide your information' },
    });
    expect(asked).to.have.length(1);
    expect(asked[0]!.message).to.equal('Please provide your information');
    expect(asked[0]!.requestedSchema).to.deep.include({ required: ['username', 'email'] });
    expect(textOf(result)).to.equal(
      'User response: {"action":"accept","content":{"username":"testuser","email":"test@example.com"}}',
    );
  });

  it('puts defaults and the five enum forms to the client as the tool wrote them', async () => {
    const client = await connect();
    asked.length = 0;
    await client.callTool({ name: 'test_elicitation_sep1034_defaults', arguments: {} });
    await client.callTool({ name: 'test_elicitation_sep1330_enums', arguments: {} });
    const [defaults, enums] = asked.map((a) => a.requestedSchema.properties as Record<string, Record<string, unknown>>);
    expect(Object.fromEntries(Object.entries(defaults!).map(([k, v]) => [k, [v.type, v.default]]))).to.deep.equal({
      name: ['string', 'John Doe'],
      age: ['integer', 30],
      score: ['number', 95.5],
      status: ['string', 'active'],
      verified: ['boolean', true],
    });
    expect(enums!.untitledSingle).to.include.keys('enum').and.not.include.keys('oneOf', 'enumNames');
    expect(enums!.titledSingle!.oneOf).to.deep.include({ const: 'value1', title: 'First Option' });
    expect(enums!.legacyEnum!.enumNames).to.deep.equal(['Option One', 'Option Two', 'Option Three']);
    expect(enums!.untitledMulti!.items).to.deep.equal({ type: 'string', enum: ['option1', 'option2', 'option3'] });
    expect((enums!.titledMulti!.items as { anyOf: unknown[] }).anyOf).to.deep.include({
      const: 'value1',
      title: 'First Choice',
    });
  });

  it('asks the client for a sample with sampling/createMessage and returns its text', async () => {
    const client = await connect();
    sampled.length = 0;
    const result = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Test prompt for sampling' } });
    expect(sampled).to.have.length(1);
    expect(sampled[0]).to.deep.include({
      messages: [{ role: 'user', content: { type: 'text', text: 'Test prompt for sampling' } }],
      maxTokens: 100,
    });
    expect(textOf(result)).to.equal('LLM response: This is a test response from the client');
  });
});
