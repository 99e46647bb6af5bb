// Rich results served over MCP: the SDK's own client, over stdio (`start --mcp`) and Streamable
// HTTP, sees a plugin's blocks and an MCP-server plugin's blocks as they were returned, and
// structured output with its schema.
import { expect } from 'chai';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Host } from '../../core/host.ts';
import { serveMcpHttp } from '../../core/mcp/serve.ts';
import { PNG } from '../fixtures/plugins/rich.ts';
import { BIN, FIXTURES, tempDir } from '../helpers.ts';
import { allowingHost } from './shared.ts';

const RICH_SERVER = join(FIXTURES, 'mcp', 'rich-server.mjs');
const RICH_PLUGIN = join(FIXTURES, 'plugins', 'rich.ts');

/** A connected client of a host serving the rich MCP server and the rich plugin; `close` ends both. */
interface Served {
  client: Client;
  close(): Promise<void>;
}

async function overStdio(): Promise<Served> {
  const tmp = tempDir('rh-mcp-rich-');
  const config = tmp.write(
    'rousseau.config.json',
    JSON.stringify({
      builtins: false,
      plugins: [
        { name: 'srv', mcp: { command: process.execPath, args: [RICH_SERVER] } },
        { module: RICH_PLUGIN, isolation: 'worker' },
      ],
      policy: { default: 'allow' },
      log: { audit: false },
    }),
  );
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'start', '--mcp', '--config', config],
      cwd: tmp.dir,
    }),
  );
  return {
    client,
    async close() {
      await client.close();
      tmp.cleanup();
    },
  };
}

async function overHttp(): Promise<Served> {
  const host: Host = await allowingHost([
    { name: 'srv', mcp: { command: process.execPath, args: [RICH_SERVER] } },
    { module: RICH_PLUGIN, isolation: 'worker' },
  ]);
  const server = await serveMcpHttp(host, { port: 0, stateless: true });
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  return {
    client,
    async close() {
      await client.close();
      await server.close();
      await host.close();
    },
  };
}

for (const [transport, serve] of [
  ['stdio', overStdio],
  ['Streamable HTTP', overHttp],
] as const) {
  describe(`MCP front end: rich results (${transport})`, function () {
    this.timeout(20_000);
    let served: Served;
    let client: Client;

    before(async () => {
      served = await serve();
      client = served.client;
    });
    after(() => served?.close());

    const call = async (name: string, args: Record<string, unknown> = {}) =>
      (await client.callTool({ name, arguments: args })) as CallToolResult;

    it("serves an MCP-server plugin's image to an MCP client as an image block, byte for byte", async () => {
      const result = await call('srv_screenshot');
      expect(result.isError).to.not.equal(true);
      expect(result.content).to.deep.equal([
        { type: 'text', text: 'the screen' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
      ]);
    });

    it("serves a plugin's blocks of every type unchanged", async () => {
      const result = await call('every_block');
      expect(result.content.map((b) => b.type)).to.deep.equal([
        'text',
        'audio',
        'resource_link',
        'resource',
        'resource',
      ]);
      expect(result.content[3]).to.deep.equal({
        type: 'resource',
        resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'embedded text' },
      });
    });

    it('lists outputSchema, and serves data as structuredContent with its JSON as text', async () => {
      const { tools } = await client.listTools();
      const weather = tools.find((t) => t.name === 'weather');
      expect(weather?.outputSchema).to.deep.include({ type: 'object', required: ['city', 'temperature'] });
      expect(tools.find((t) => t.name === 'srv_read_text_file')?.outputSchema).to.deep.include({ type: 'object' });
      expect(tools.find((t) => t.name === 'picture')).to.not.have.property('outputSchema');
      // The SDK client checks structuredContent against the listed schema: it would throw on a mismatch.
      const result = await call('weather', { mode: 'ok' });
      expect(result.structuredContent).to.deep.equal({ city: 'Paris', temperature: 21.5 });
      expect(result.content).to.deep.equal([{ type: 'text', text: '{"city":"Paris","temperature":21.5}' }]);
    });

    it('serves a 150 KB read through an MCP server with structured output: text and structuredContent cut, flagged', async () => {
      const result = await call('srv_read_text_file', { bytes: 150_000 });
      expect(result.isError).to.not.equal(true);
      expect(result._meta).to.deep.equal({ 'rousseau-host/truncated': true, 'rousseau-host/dataTruncated': true });
      const text = (result.content[0] as { text: string }).text;
      expect(text).to.match(/^HEAD[\s\S]*bytes omitted of 150000[\s\S]*TAIL$/);
      expect((result.structuredContent as { content: string }).content).to.match(/^HEAD[\s\S]*omitted[\s\S]*TAIL$/);
    });

    it('answers a malformed block and an image over the cap with an isError result and its code', async () => {
      const malformed = await call('malformed', { kind: 'no-mime' });
      expect([malformed.isError, malformed._meta?.['rousseau-host/code']]).to.deep.equal([true, 'invalid_output']);
      const big = await call('image_of', { bytes: 100_000 });
      expect([big.isError, big._meta?.['rousseau-host/code']]).to.deep.equal([true, 'output_too_large']);
      expect(big.content).to.have.length(1);
      expect((big.content[0] as { text: string }).text).to.match(/image block 1 \(image\/png\) of 100000 bytes/);
    });
  });
}
