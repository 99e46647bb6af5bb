// ctx.elicit, ctx.sample and the policy's `ask` over MCP, seen from the SDK's client: a client that
// declared `elicitation` / `sampling` answers them (over HTTP with sessions, and over stdio through
// the built bin); one that did not gets a clear error, and `ask` is a denial as before.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CallToolResult,
  CreateMessageRequestSchema,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { createHost, type Host } from '../../core/host.ts';
import { serveMcpHttp } from '../../core/mcp/serve.ts';
import { BIN, FIXTURES, tempDir, until } from '../helpers.ts';

const FORM = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name' },
    colour: {
      type: 'string',
      oneOf: [
        { const: 'r', title: 'Red' },
        { const: 'g', title: 'Green' },
      ],
    },
  },
  required: ['name'],
};

const textOf = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;
const codeOf = (r: unknown) => (r as CallToolResult)._meta?.['rousseau-host/code'];

/** A client that answers each elicitation with the next of `answers`, recording what it was asked. */
function askingClient(answers: ElicitResult[], asked: ElicitRequest['params'][], sampling = true): Client {
  const client = new Client(
    { name: 'asking-client', version: '1.0.0' },
    { capabilities: { elicitation: {}, ...(sampling ? { sampling: {} } : {}) } },
  );
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params);
    return answers.shift() ?? { action: 'cancel' };
  });
  if (!sampling) return client;
  client.setRequestHandler(CreateMessageRequestSchema, (request) => ({
    role: 'assistant',
    model: 'client-model',
    stopReason: 'endTurn',
    content: { type: 'text', text: `heard: ${(request.params.messages[0]!.content as { text: string }).text}` },
  }));
  return client;
}

interface AuditLine {
  event: string;
  tool: string;
  decision?: string;
  answer?: string;
  answeredBy?: string;
  outcome?: string;
}

describe('ctx.elicit, ctx.sample and ask over MCP (HTTP with sessions)', function () {
  this.timeout(30_000);
  const tmp = tempDir('rh-mcp-elicit-');
  const audit = join(tmp.dir, 'audit.jsonl');
  let host: Host;
  let server: Awaited<ReturnType<typeof serveMcpHttp>>;
  const clients: Client[] = [];

  const connect = async (client: Client) => {
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    clients.push(client);
    return client;
  };
  const decisions = () =>
    readFileSync(audit, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditLine)
      .filter((l) => l.event === 'decision' && l.tool === 'echo');

  before(async () => {
    host = await createHost({
      cwd: FIXTURES,
      audit,
      logLevel: 'error',
      config: {
        builtins: false,
        plugins: [
          { module: './plugins/asking.ts', isolation: 'worker' },
          { module: './mcp/tools.ts', isolation: 'inline' },
        ],
        policy: { default: 'allow', ask: [{ tool: 'echo' }] },
      },
    });
    server = await serveMcpHttp(host, { port: 0 });
  });
  after(async () => {
    for (const client of clients) await client.close();
    await server.close();
    await host.close();
    tmp.cleanup();
  });

  it('asks the client with elicitation/create and gives the tool its accepted content; decline and cancel pass through', async () => {
    const asked: ElicitRequest['params'][] = [];
    const client = await connect(
      askingClient(
        [{ action: 'accept', content: { name: 'Ada', colour: 'g' } }, { action: 'decline' }, { action: 'cancel' }],
        asked,
      ),
    );
    const call = () => client.callTool({ name: 'ask_user', arguments: { message: 'Who are you?', form: FORM } });
    expect(JSON.parse(textOf(await call()))).to.deep.equal({ action: 'accept', content: { name: 'Ada', colour: 'g' } });
    expect(JSON.parse(textOf(await call()))).to.deep.equal({ action: 'decline' });
    expect(JSON.parse(textOf(await call()))).to.deep.equal({ action: 'cancel' });
    expect(asked[0]).to.deep.include({ message: 'Who are you?', requestedSchema: FORM });
  });

  it("rejects content that does not match the form: the tool hears why, not the client's values", async () => {
    const client = await connect(askingClient([{ action: 'accept', content: { name: 'Ada', colour: 'blue' } }], []));
    const result = await client.callTool({ name: 'ask_user', arguments: { message: 'Colour?', form: FORM } });
    expect(textOf(result)).to.match(/^error: .*"colour" that is not one of r, g/);
  });

  it('answers ctx.sample with sampling/createMessage', async () => {
    const client = await connect(askingClient([], []));
    const result = await client.callTool({ name: 'ask_model', arguments: { prompt: 'ping', maxTokens: 20 } });
    expect(JSON.parse(textOf(result))).to.deep.equal({
      role: 'assistant',
      content: { type: 'text', text: 'heard: ping' },
      model: 'client-model',
      stopReason: 'endTurn',
    });
  });

  it('tells the tool when the client cannot be asked (no elicitation or sampling capability), and denies `ask`', async () => {
    const client = await connect(new Client({ name: 'plain-client', version: '1.0.0' }));
    const elicited = await client.callTool({ name: 'ask_user', arguments: { message: 'Hi?', form: FORM } });
    expect(textOf(elicited)).to.match(/ctx\.elicit: no one can be asked here/);
    const sampled = await client.callTool({ name: 'ask_model', arguments: { prompt: 'ping', maxTokens: 20 } });
    expect(textOf(sampled)).to.match(/ctx\.sample: no model can be asked here/);
    const denied = await client.callTool({ name: 'echo', arguments: { text: 'plain' } });
    expect(codeOf(denied)).to.equal('denied');
    expect(await until(() => decisions().at(-1)))
      .to.deep.include({ answer: 'no_approver' })
      .and.not.have.property('answeredBy');
  });

  it('tells the tool that a stateless server asks no client, even one that declared both capabilities', async () => {
    const stateless = await serveMcpHttp(host, { port: 0, stateless: true });
    const asked: ElicitRequest['params'][] = [];
    const client = askingClient([{ action: 'accept', content: { name: 'Ada' } }], asked);
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(stateless.url)));
      const elicited = await client.callTool({ name: 'ask_user', arguments: { message: 'Hi?', form: FORM } });
      expect(textOf(elicited)).to.include(
        'ctx.elicit: no one can be asked here: this server is stateless (--stateless), so no request has a session whose client declared elicitation',
      );
      const sampled = await client.callTool({ name: 'ask_model', arguments: { prompt: 'ping', maxTokens: 20 } });
      expect(textOf(sampled)).to.include(
        'ctx.sample: no model can be asked here: this server is stateless (--stateless), so no request has a session whose client declared sampling',
      );
      expect(asked).to.deep.equal([]);
    } finally {
      await client.close();
      await stateless.close();
    }
  });

  it('puts `ask` to a client that can elicit: allow once, always for the session, deny; each audited as answered by the client', async () => {
    const asked: ElicitRequest['params'][] = [];
    const decide = (decision: string): ElicitResult => ({ action: 'accept', content: { decision } });
    const client = await connect(askingClient([decide('once'), decide('deny'), decide('always')], asked, false));
    const echo = (text: string) => client.callTool({ name: 'echo', arguments: { text } });

    expect(textOf(await echo('first'))).to.equal('first');
    expect(codeOf(await echo('second'))).to.equal('denied');
    expect(textOf(await echo('\u202eevil'))).to.equal('\u202eevil');
    // "Always" covers that exact input for the session: it is not asked again.
    expect(textOf(await echo('\u202eevil'))).to.equal('\u202eevil');
    expect(asked).to.have.length(3);
    const message = String(asked[2]!.message);
    expect(message).to.contain('The tool "echo" (plugin tools) needs approval: policy rule policy.ask[0]');
    expect(message).to.contain('Input: {"text":"\\u202eevil"}'); // escaped: it cannot reorder the text it shows
    expect(asked[2]).to.have.nested.property('requestedSchema.properties.decision');

    // Audit lines are written in batches: wait for the last call's.
    await until(() => decisions().length === 5);
    const lines = decisions().slice(-4);
    expect(lines.map((l) => [l.answer, l.answeredBy])).to.deep.equal([
      ['approved', 'mcp-client'],
      ['refused', 'mcp-client'],
      ['approved_always', 'mcp-client'],
      [undefined, undefined],
    ]);
  });

  it('denies `ask` when the client answers the approval with a form of its own, saying asking failed, not that the user said no', async () => {
    const client = await connect(askingClient([{ action: 'accept', content: { approve: true } }], [], false));
    const result = await client.callTool({ name: 'echo', arguments: { text: 'odd answer' } });
    expect(codeOf(result)).to.equal('denied');
    expect(textOf(result)).to.equal(
      `Call to "echo" was denied: asking for approval failed (the host's log says why). Do not retry it; ask the user what to do instead.`,
    );
    expect(await until(() => decisions().find((l) => l.answer === 'prompt_failed'))).to.deep.include({
      answeredBy: 'mcp-client',
    });
  });

  it("does not ask the client when the host answers `ask` itself (--yes): the operator's answer stands", async () => {
    const yesHost = await createHost({
      cwd: FIXTURES,
      logLevel: 'error',
      approve: Object.assign(() => true, { answeredBy: 'yes-flag' }),
      config: {
        builtins: false,
        plugins: [{ module: './mcp/tools.ts', isolation: 'inline' }],
        policy: { default: 'allow', ask: [{ tool: 'echo' }] },
      },
    });
    const yesServer = await serveMcpHttp(yesHost, { port: 0, askClient: false });
    const asked: ElicitRequest['params'][] = [];
    const client = askingClient([{ action: 'accept', content: { decision: 'deny' } }], asked, false);
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(yesServer.url)));
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'fine' } }))).to.equal('fine');
      expect(asked).to.deep.equal([]);
    } finally {
      await client.close();
      await yesServer.close();
      await yesHost.close();
    }
  });
});

describe('ctx.elicit and ctx.sample over MCP (stdio, the built bin)', function () {
  this.timeout(30_000);
  const tmp = tempDir('rh-mcp-elicit-stdio-');
  let client: Client;

  before(async () => {
    const config = tmp.write(
      'rousseau.config.json',
      JSON.stringify({
        builtins: false,
        plugins: [{ module: join(FIXTURES, 'plugins', 'asking.ts'), isolation: 'process' }],
        policy: { default: 'allow' },
        log: { audit: false },
      }),
    );
    client = askingClient([{ action: 'accept', content: { name: 'Grace' } }], []);
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'start', '--mcp', '--config', config],
        cwd: tmp.dir,
        stderr: 'pipe',
      }),
    );
  });
  after(async () => {
    await client.close();
    tmp.cleanup();
  });

  it('asks the client from a process plugin, and samples through it', async () => {
    const elicited = await client.callTool({ name: 'ask_user', arguments: { message: 'Name?', form: FORM } });
    expect(JSON.parse(textOf(elicited))).to.deep.equal({ action: 'accept', content: { name: 'Grace' } });
    const sampled = await client.callTool({ name: 'ask_model', arguments: { prompt: 'pong', maxTokens: 5 } });
    expect(JSON.parse(textOf(sampled))).to.deep.include({ content: { type: 'text', text: 'heard: pong' } });
  });
});
