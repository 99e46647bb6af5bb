// Callers over MCP HTTP, seen from the SDK's own client: each request's caller (put on it by
// serveMcpHttp's `authenticate`, here read from a header the test sets) decides which tools it
// lists and may call, and which limits its calls count against.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { validateConfig } from '../../core/config.ts';
import type { Host } from '../../core/host.ts';
import { serveMcpHttp } from '../../core/mcp/serve.ts';
import type { Caller } from '../../core/types.ts';
import { FIXTURES, tempDir, until } from '../helpers.ts';
import { allowingHost, code, text } from './shared.ts';

const TOOLS = { module: join(FIXTURES, 'mcp', 'tools.ts'), isolation: 'inline' as const };

const SCOPES: Record<string, string[]> = { alice: ['tools:read'], bob: ['tools:write'], guest: ['guest'] };

/** The caller named by the `x-test-caller` header; no header: refused (401), as by the token check. */
function authenticate(req: IncomingMessage): Caller | undefined {
  const name = req.headers['x-test-caller'];
  return typeof name === 'string' ? { name, scopes: SCOPES[name] ?? [], via: 'token' } : undefined;
}

/** What a call ended with: `ok: TEXT`, or the HTTP status and message of the error the client threw. */
function outcome(call: Promise<unknown>): Promise<string> {
  return call.then(
    (r) => `ok: ${text(r)}`,
    (error: Error & { code?: unknown }) => `${error.code}: ${error.message}`,
  );
}

describe('MCP HTTP: callers', function () {
  this.timeout(20_000);
  const tmp = tempDir('rh-mcp-callers-');
  const clients: Client[] = [];
  const servers: { close(): Promise<void> }[] = [];

  /** An SDK client whose every request carries `caller` (none: no header). */
  async function connect(url: string, caller?: string): Promise<Client> {
    const client = new Client({ name: `client-${caller ?? 'anonymous'}`, version: '1.0.0' });
    const headers: Record<string, string> = caller ? { 'x-test-caller': caller } : {};
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    clients.push(client);
    return client;
  }

  async function serve(host: Host, opts: Partial<Parameters<typeof serveMcpHttp>[1]> = {}) {
    const server = await serveMcpHttp(host, { port: 0, authenticate, ...opts });
    servers.push(server);
    return server.url;
  }

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(servers.map((s) => s.close()));
    tmp.cleanup();
  });

  describe('policy and tools/list per caller', () => {
    const audit = join(tmp.dir, 'policy-audit.jsonl');
    let host: Host;
    let url: string;
    before(async () => {
      host = await allowingHost([TOOLS], audit, {
        policy: {
          default: 'allow',
          deny: [
            { tool: 'fail', callers: ['alice'] },
            { tool: 'progress', scopes: ['guest'] },
            { tool: 'echo', callers: ['bob'], match: 'secret', reason: 'not for bob' },
          ],
        },
      });
      url = await serve(host);
    });
    after(() => host.close());

    const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name);

    it('two callers see different tools; a request without a caller (a server without authentication) sees them all', async () => {
      const open = await serve(host, { authenticate: undefined });
      const [alice, bob, guest, anonymous] = await Promise.all([
        connect(url, 'alice'),
        connect(url, 'bob'),
        connect(url, 'guest'),
        connect(open),
      ]);
      expect(await names(alice)).to.deep.equal(['chatty', 'echo', 'progress', 'stall', 'wait']);
      expect(await names(bob)).to.deep.equal(['chatty', 'echo', 'fail', 'progress', 'stall', 'wait']);
      expect(await names(guest)).to.deep.equal(['chatty', 'echo', 'fail', 'stall', 'wait']);
      expect(await names(anonymous)).to.deep.equal(await names(bob));
    });

    it('a hidden tool called by name is an unknown tool to that caller, and the answer names only their tools', async () => {
      const alice = await connect(url, 'alice');
      const hidden = await alice.callTool({ name: 'fail', arguments: { message: 'boom' } });
      expect([hidden.isError, code(hidden)]).to.deep.equal([true, 'unknown_tool']);
      expect(text(hidden)).to.equal('Unknown tool "fail". Available tools: chatty, echo, progress, stall, wait.');
      const bob = await connect(url, 'bob');
      const failed = await bob.callTool({ name: 'fail', arguments: { message: 'boom' } });
      expect([failed.isError, code(failed)]).to.deep.equal([true, 'tool_error']);
    });

    it('a rule naming a caller denies that caller only, and the audit names the caller on both lines', async () => {
      const [alice, bob] = await Promise.all([connect(url, 'alice'), connect(url, 'bob')]);
      const denied = await bob.callTool({ name: 'echo', arguments: { text: 'the secret' } });
      expect([denied.isError, code(denied)]).to.deep.equal([true, 'denied']);
      expect(text(denied)).to.include('not for bob').and.include('policy.deny[2]');
      expect(text(await bob.callTool({ name: 'echo', arguments: { text: 'hello' } }))).to.equal('hello');
      expect(text(await alice.callTool({ name: 'echo', arguments: { text: 'the secret' } }))).to.equal('the secret');
      await host.close();
      const lines = readFileSync(audit, 'utf8').trim().split('\n');
      const secret = lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.tool === 'echo' && (l.input === undefined || String(l.input).includes('secret')));
      const decisions = secret.filter((l) => l.event === 'decision').map((l) => [l.caller, l.decision]);
      expect(decisions).to.have.deep.members([
        ['bob', 'deny'],
        ['alice', 'allow'],
      ]);
      const calls = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === 'call');
      expect(calls.every((l) => typeof l.caller === 'string')).to.equal(true);
    });
  });

  describe('limits per caller', () => {
    let host: Host;
    before(async () => {
      // One call, then one more every 100 s: the second call of a caller is always over.
      host = await allowingHost([TOOLS], false, { serve: { limits: { callsPerSecond: 0.01 } } });
    });
    after(() => host.close());

    it('callsPerSecond (from the config): over it, the MCP client gets an error naming the limit', async () => {
      const url = await serve(host);
      const dave = await connect(url, 'dave');
      expect(text(await dave.callTool({ name: 'echo', arguments: { text: 'one' } }))).to.equal('one');
      const over = await outcome(dave.callTool({ name: 'echo', arguments: { text: 'two' } }));
      expect(over)
        .to.match(/^429: /)
        .and.include('serve.limits.callsPerSecond')
        .and.include('retry after');
      // Other requests are not counted, and other callers have their own bucket.
      expect((await dave.listTools()).tools.length).to.be.greaterThan(0);
      const erin = await connect(url, 'erin');
      expect(text(await erin.callTool({ name: 'echo', arguments: { text: 'mine' } }))).to.equal('mine');
    });

    it('over HTTP: 429 with Retry-After in whole seconds, and the JSON-RPC error answering the call; batches count each call', async () => {
      const url = await serve(host);
      const client = await connect(url, 'fay');
      await client.callTool({ name: 'echo', arguments: { text: 'one' } });
      const post = (body: unknown, caller: string) =>
        fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'x-test-caller': caller,
            'mcp-protocol-version': '2025-06-18',
          },
          body: JSON.stringify(body),
        });
      const call = (id: number) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'x' } },
      });
      const res = await post(call(41), 'fay');
      expect(res.status).to.equal(429);
      const retryAfter = res.headers.get('retry-after');
      expect(retryAfter).to.match(/^\d+$/);
      expect(Number(retryAfter)).to.be.within(90, 100);
      const body = (await res.json()) as { id: unknown; error: { message: string; data: unknown } };
      expect(body.id).to.equal(41);
      expect(body.error.data).to.deep.equal({ limit: 'callsPerSecond', retryAfterSeconds: Number(retryAfter) });
      // A fresh caller may send one call at once: a batch of two is over, whatever its bucket holds.
      const batch = await post([call(1), call(2)], 'gus');
      expect(batch.status).to.equal(429);
      expect(batch.headers.get('retry-after')).to.equal('1');
      expect(((await batch.json()) as { error: { message: string } }).error.message).to.include(
        'A batch of 2 tool calls',
      );
    });

    it('callers without a name share one bucket, `anonymous`, stateless too', async () => {
      const url = await serve(host, { stateless: true, authenticate: undefined });
      const [first, second] = await Promise.all([connect(url), connect(url)]);
      expect(text(await first.callTool({ name: 'echo', arguments: { text: 'one' } }))).to.equal('one');
      const over = await outcome(second.callTool({ name: 'echo', arguments: { text: 'two' } }));
      expect(over)
        .to.match(/^429: /)
        .and.include('callers without a name');
    });

    it('inFlight: a slow call holds its place until it ends, cancelled included; other callers are not held up', async () => {
      const url = await serve(host, { limits: { inFlight: 1 } });
      const [hana, ivan] = await Promise.all([connect(url, 'hana'), connect(url, 'ivan')]);
      const cancel = new AbortController();
      const waiting = hana
        .callTool({ name: 'wait', arguments: {} }, undefined, { signal: cancel.signal })
        .catch((error: Error) => error.message);
      // The call is in flight once the host has it: the second one is refused, whatever the bucket.
      const secondCall = () => outcome(hana.callTool({ name: 'echo', arguments: { text: 'next' } }));
      const refused = await until(
        async () => {
          const answer = await secondCall();
          return answer.startsWith('429: ') ? answer : undefined;
        },
        { message: 'a refusal while the slow call runs' },
      );
      expect(refused).to.include('serve.limits.inFlight').and.include('1 running now');
      expect(text(await ivan.callTool({ name: 'echo', arguments: { text: 'free' } }))).to.equal('free');
      cancel.abort();
      await waiting;
      // The SDK sends no response to a cancelled call, so its request stays open: the place is
      // given back when the call ends, not when its response is sent.
      expect(await until(async () => ((await secondCall()) === 'ok: next' ? true : undefined))).to.equal(true);
    });
  });

  it('config: serve.limits takes positive numbers, inFlight whole ones, and no other key', () => {
    const problems = (limits: unknown) => {
      try {
        validateConfig({ serve: { limits } }, 'rousseau.config.ts');
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(problems({ callsPerSecond: 0.5, inFlight: 4 })).to.equal('');
    expect(problems({ callsPerSecond: 0 })).to.include('serve.limits.callsPerSecond: must be > 0');
    expect(problems({ inFlight: 1.5 })).to.include('serve.limits.inFlight: must be integer');
    expect(problems({ inFlight: 0 })).to.include('serve.limits.inFlight');
    expect(problems({ perSecond: 3 })).to.include('serve.limits.perSecond: unknown key');
  });
});
