// The built-in tools' annotations as an MCP client reads them: every hint set, and true.
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createHost } from '../../core/host.ts';
import { serveMcpHttp } from '../../core/mcp/serve.ts';
import { tempDir } from '../helpers.ts';

const reads = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

const EXPECTED: Record<string, Record<string, unknown>> = {
  read: { title: 'Read a file', ...reads },
  ls: { title: 'List a directory', ...reads },
  glob: { title: 'Find files by name', ...reads },
  grep: { title: 'Search file contents', ...reads },
  write: {
    title: 'Write a file',
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  edit: {
    title: 'Edit a file',
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: false,
  },
  bash: {
    title: 'Run a shell command',
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true,
  },
  http_get: {
    title: 'Fetch a web page',
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: true,
  },
};

describe('built-in tools over MCP', function () {
  this.timeout(20_000);

  it('declare every hint, true to what they do (fs tools stay in the workspace: openWorldHint false)', async () => {
    const tmp = tempDir('rh-mcp-builtins-');
    const host = await createHost({ cwd: tmp.dir, audit: false, logLevel: 'error', config: {} });
    const server = await serveMcpHttp(host, { port: 0 });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const { tools } = await client.listTools();
      const got = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
      expect(got).to.deep.equal(EXPECTED);
    } finally {
      await client.close();
      await server.close();
      await host.close();
      tmp.cleanup();
    }
  });
});
