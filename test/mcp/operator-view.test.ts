// What one caller of a shared server may learn of the others and of the tools hidden from it:
// /metrics only with a grant (serve.metrics), a hidden tool unknown exactly as a missing one is,
// and tools/list_changed only for changes to the tools the caller can see.
import { expect } from 'chai';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { validateConfig } from '../../core/config.ts';
import { createHost, type Host } from '../../core/host.ts';
import { serveMcpHttp } from '../../core/mcp/serve.ts';
import type { Caller } from '../../core/types.ts';
import { FIXTURES, tempDir, until } from '../helpers.ts';
import { allowingHost, code, text } from './shared.ts';

/** The caller named by `x-test-caller`, with the comma-separated scopes of `x-test-scopes`. */
function authenticate(req: IncomingMessage): Caller | undefined {
  const name = req.headers['x-test-caller'];
  const scopes = req.headers['x-test-scopes'];
  if (typeof name !== 'string') return undefined;
  return { name, scopes: typeof scopes === 'string' ? scopes.split(',') : [], via: 'token' };
}

const as = (caller: string, scopes?: string): RequestInit => ({
  headers: { 'x-test-caller': caller, ...(scopes ? { 'x-test-scopes': scopes } : {}) },
});

describe('MCP HTTP: what a caller learns of others', function () {
  this.timeout(30_000);
  const tmp = tempDir('rh-mcp-operator-');
  const TOOLS = { module: join(FIXTURES, 'mcp', 'tools.ts'), isolation: 'inline' as const };
  const clients: Client[] = [];
  const servers: { close(): Promise<void> }[] = [];
  let host: Host;
  let url: string;

  before(async () => {
    host = await allowingHost([TOOLS], false, {
      policy: { default: 'allow', deny: [{ tool: 'fail', callers: ['alice'] }] },
      serve: { metrics: { callers: ['prom'], scopes: ['metrics:read'] } },
    });
    url = await serve(host);
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(servers.map((s) => s.close()));
    await host.close();
    tmp.cleanup();
  });

  async function serve(on: Host, opts: Partial<Parameters<typeof serveMcpHttp>[1]> = {}) {
    const server = await serveMcpHttp(on, { port: 0, authenticate, ...opts });
    servers.push(server);
    return server.url;
  }

  async function connect(to: string, caller: string): Promise<Client> {
    const client = new Client({ name: `client-${caller}`, version: '1.0.0' });
    const { headers } = as(caller);
    await client.connect(new StreamableHTTPClientTransport(new URL(to), { requestInit: { headers } }));
    clients.push(client);
    return client;
  }

  const metrics = (to: string, init?: RequestInit) => fetch(new URL('/metrics', to), init);

  describe('/metrics is granted by serve.metrics', () => {
    it('answers the callers and scopes the grant names, from the config', async () => {
      const bob = await connect(url, 'bob');
      await bob.callTool({ name: 'echo', arguments: { text: 'hi' } });
      const byName = await metrics(url, as('prom'));
      expect(byName.status).to.equal(200);
      expect(await byName.text()).to.include('caller="bob"');
      expect((await metrics(url, as('carol', 'tools:call,metrics:read'))).status).to.equal(200);
    });

    it('refuses any other caller with 403 and a body that says why, naming no one else', async () => {
      const refused = await metrics(url, as('alice', 'tools:call'));
      expect(refused.status).to.equal(403);
      const challenge = refused.headers.get('www-authenticate') ?? '';
      expect(challenge).to.include('error="insufficient_scope"').and.include('scope="metrics:read"');
      const body = await refused.text();
      expect(body).to.include('caller \\"alice\\" may not read /metrics').and.include('serve.metrics');
      expect(body).to.not.include('prom');
      expect((await metrics(url)).status, 'no credentials').to.equal(401);
    });

    it('with authentication and no grant, no caller may read it; without authentication (loopback) anyone may', async () => {
      const bare = await allowingHost([TOOLS]);
      try {
        const closed = await serve(bare);
        expect((await metrics(closed, as('prom', 'metrics:read'))).status).to.equal(403);
        const open = await serve(bare, { authenticate: undefined });
        expect((await metrics(open)).status).to.equal(200);
      } finally {
        await bare.close();
      }
    });

    it('config: serve.metrics takes callers and scopes, and no other key', () => {
      const problems = (value: unknown) => {
        try {
          validateConfig({ serve: { metrics: value } }, 'rousseau.config.ts');
          return '';
        } catch (error) {
          return (error as Error).message;
        }
      };
      expect(problems({ callers: ['prometheus'], scopes: ['metrics:read'] })).to.equal('');
      expect(problems({ caller: ['prometheus'] })).to.include('serve.metrics.caller: unknown key');
      expect(problems({ callers: [''] })).to.include('serve.metrics.callers');
    });
  });

  it('a tool hidden from a caller is unknown to it exactly as a tool that does not exist, in /metrics too', async () => {
    const alice = await connect(url, 'alice');
    const hidden = await alice.callTool({ name: 'fail', arguments: { message: 'boom' } });
    const missing = await alice.callTool({ name: 'nope', arguments: { message: 'boom' } });
    expect({ ...hidden, content: text(hidden).replace('"fail"', '"nope"') }).to.deep.equal({
      ...missing,
      content: text(missing),
    });
    expect(code(hidden)).to.equal('unknown_tool');
    const scraped = await (await metrics(url, as('prom'))).text();
    expect(scraped).to.include('rousseau_tool_calls_total{tool="",plugin="",code="unknown_tool",caller="alice"} 2');
  });

  describe('tools/list_changed', () => {
    let crashy: Host;
    let skipped = 0;
    before(async () => {
      // The crash budget's clock runs ahead by `skipped`: the quarantine ends without being waited out.
      crashy = await createHost({
        cwd: tmp.dir,
        audit: false,
        logLevel: 'silent',
        clock: () => Date.now() + skipped,
        config: {
          builtins: false,
          plugins: [TOOLS, { module: join(FIXTURES, 'mcp', 'crashy.ts'), isolation: 'worker', loadTimeoutMs: 60_000 }],
          policy: { default: 'allow', deny: [{ tool: 'crash', callers: ['alice'] }] },
          isolation: { quarantine: { failures: 1, windowMs: 60_000, cooldownMs: 60_000 } },
        },
      });
    });
    after(() => crashy.close());

    /**
     * A session of `caller` read raw, its notification stream (GET) open once this resolves:
     * a notification sent to it from then on is in `received()`.
     */
    async function rawSession(to: string, caller: string) {
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-test-caller': caller,
        'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
      };
      const post = async (message: unknown, sessionId?: string) => {
        const response = await fetch(to, {
          method: 'POST',
          headers: { ...headers, ...(sessionId ? { 'mcp-session-id': sessionId } : {}) },
          body: JSON.stringify(message),
        });
        await response.text();
        return response.headers.get('mcp-session-id') ?? sessionId;
      };
      const sessionId = await post({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      });
      await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId);
      await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionId);
      const stop = new AbortController();
      const stream = await fetch(to, {
        headers: { ...headers, accept: 'text/event-stream', 'mcp-session-id': sessionId! },
        signal: stop.signal,
      });
      expect(stream.status).to.equal(200);
      let received = '';
      const reading = (async () => {
        const decoder = new TextDecoder();
        try {
          for await (const chunk of stream.body!) received += decoder.decode(chunk as Uint8Array, { stream: true });
        } catch {
          // aborted: the test is over
        }
      })();
      return {
        received: () => received,
        close: async () => {
          stop.abort();
          await reading;
        },
      };
    }

    it('tells a caller of changes to the tools it can see, and nothing of those hidden from it', async () => {
      const crashUrl = await serve(crashy);
      const bob = await connect(crashUrl, 'bob');
      let heard = 0;
      bob.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard++);
      expect((await bob.listTools()).tools.map((t) => t.name)).to.include('crash');
      const alice = await rawSession(crashUrl, 'alice');
      try {
        expect(code(await bob.callTool({ name: 'crash', arguments: {} }))).to.equal('crashed');
        await until(() => heard >= 1, { timeoutMs: 8000, message: "list_changed to bob (crash's plugin resting)" });
        expect((await bob.listTools()).tools.map((t) => t.name)).to.not.include('crash');
        skipped = 60_000;
        await until(() => heard >= 2, { timeoutMs: 8000, message: 'list_changed to bob (back)' });
        // Sent in the same turn as bob's, had it been sent: alice's stream has had time to carry it.
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(alice.received()).to.not.include('list_changed');
      } finally {
        await alice.close();
      }
    });
  });
});
