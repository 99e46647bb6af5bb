// Streamable HTTP with sessions (the default of serveMcpHttp), seen from the SDK's client and, where
// the client hides it (event ids, priming, Last-Event-ID), from raw HTTP on loopback.
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { Host } from '../../core/host.ts';
import { serveMcpHttp } from '../../core/mcp/serve.ts';
import { sendToolListChanged } from '../../core/mcp/server.ts';
import { tempDir, until } from '../helpers.ts';
import { allowingHost, auditCodes, hostOfRemote, text } from './shared.ts';

const ACCEPT = 'application/json, text/event-stream';

/** POSTs one JSON-RPC message; `session` names the session (the Mcp-Session-Id header). */
function post(url: string, message: unknown, session?: string, signal?: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: ACCEPT,
      ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}),
    },
    body: JSON.stringify(message),
    ...(signal ? { signal } : {}),
  });
}

/** A session opened by hand (initialize, then initialized), its id; no stream is left open. */
async function openSession(url: string): Promise<string> {
  const init = await post(url, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  expect(init.status).to.equal(200);
  await init.text();
  const session = init.headers.get('mcp-session-id')!;
  expect(session).to.be.a('string').and.not.be.empty;
  const initialized = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  expect(initialized.status).to.equal(202);
  return session;
}

const ping = (url: string, session: string) => post(url, { jsonrpc: '2.0', id: 99, method: 'ping' }, session);

/** Reads an SSE body until `done` holds for the text so far; the stream is left to the caller. */
async function readUntil(body: ReadableStream<Uint8Array>, done: (text: string) => boolean): Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let seen = '';
  try {
    while (!done(seen)) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      seen += decoder.decode(value, { stream: true });
    }
    return seen;
  } finally {
    reader.releaseLock();
  }
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

describe('serveMcpHttp with sessions (the default)', function () {
  this.timeout(20_000);
  const tmp = tempDir('rh-mcp-sessions-');
  const audit = join(tmp.dir, 'audit.jsonl');
  let host: Host;
  let server: Awaited<ReturnType<typeof serveMcpHttp>>;

  before(async () => {
    host = await allowingHost([{ module: './sessions.ts', isolation: 'inline' }], audit);
    server = await serveMcpHttp(host, { port: 0 });
  });
  after(async () => {
    await server.close();
    await host.close();
    tmp.cleanup();
  });

  it('gives each client a session, promising list_changed and logging', async () => {
    const client = await connect(server.url);
    try {
      expect((client.transport as StreamableHTTPClientTransport).sessionId).to.be.a('string');
      expect(client.getServerCapabilities()).to.deep.include({ tools: { listChanged: true }, logging: {} });
      expect((await client.listTools()).tools.map((t) => t.name)).to.deep.equal([
        'log_levels',
        'session_of',
        'write_later',
      ]);
      expect(server.sessions()).to.be.at.least(1);
    } finally {
      await client.close();
    }
  });

  it('begins each session id with the host id and a dot, then a random UUID: visible ASCII, unguessable, routable', async () => {
    const [a, b] = [await openSession(server.url), await openSession(server.url)];
    for (const id of [a, b]) {
      expect(id.startsWith(`${host.hostId}.`), id).to.equal(true);
      expect(id.slice(host.hostId.length + 1)).to.match(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      expect(id).to.match(/^[\x21-\x7e]+$/); // the spec's charset for Mcp-Session-Id
    }
    expect(a).to.not.equal(b);
    // Sent back as it came, the id reaches its session.
    expect((await ping(server.url, a)).status).to.equal(200);
  });

  it("tags a session's calls with an id of their own: plugins and the audit file never see the session's id", async () => {
    const [a, b] = [await connect(server.url), await connect(server.url)];
    try {
      const id = (client: Client) => (client.transport as StreamableHTTPClientTransport).sessionId!;
      const seen = async (client: Client) => text(await client.callTool({ name: 'session_of', arguments: {} }));
      const tag = await seen(a);
      expect(tag).to.match(/^mcp-[0-9a-f]{32}$/);
      expect(await seen(a)).to.equal(tag); // one session, one tag: its calls can be told together
      expect(await seen(b)).to.not.equal(tag);
      // The id would let whoever holds it into the session: its streams, its replayed results, DELETE.
      const written = readFileSync(audit, 'utf8');
      for (const client of [a, b]) {
        expect(tag).to.not.include(id(client));
        expect(written).to.not.include(id(client));
      }
      expect(written).to.include(tag);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('stops the running tool when the client cancels the call (notifications/cancelled)', async () => {
    const client = await connect(server.url);
    const cancelled = join(tmp.dir, 'cancelled.txt');
    const ran = join(tmp.dir, 'ran.txt');
    try {
      const controller = new AbortController();
      const call = client
        .callTool({ name: 'write_later', arguments: { path: cancelled, ms: 1500 } }, undefined, {
          signal: controller.signal,
        })
        .catch((e: unknown) => e);
      // The call is running once the plugin has it; cancel it then.
      setTimeout(() => controller.abort('user cancelled'), 200);
      expect(await call).to.be.instanceOf(Error);
      await until(() => auditCodes(audit).includes('write_later:cancelled'), { message: 'the cancelled audit record' });
      // A second call, started later with the same delay, writes its file after the first was due:
      // by then a first call that ran on would have written its own.
      const r = await client.callTool({ name: 'write_later', arguments: { path: ran, ms: 1500 } });
      expect(text(r)).to.equal('written');
      expect(existsSync(ran)).to.equal(true);
      expect(existsSync(cancelled)).to.equal(false);
    } finally {
      await client.close();
    }
  });

  it('sends tools/list_changed to every connected session', async () => {
    const clients = [await connect(server.url), await connect(server.url)];
    const heard = [0, 0];
    for (const [i, c] of clients.entries())
      c.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard[i]!++);
    try {
      // Each client opens its notification stream (GET) on its own time: say it until both heard it.
      await until(
        () => {
          sendToolListChanged(host);
          return heard.every((n) => n > 0);
        },
        { intervalMs: 100, message: () => `list_changed on both sessions (heard ${heard.join(', ')})` },
      );
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it("sends a call's log entries at or above the level each session set (logging/setLevel)", async () => {
    const chosen = await connect(server.url);
    const fallback = await connect(server.url);
    const got = new Map<Client, LoggingMessageNotification['params'][]>([
      [chosen, []],
      [fallback, []],
    ]);
    for (const [client, list] of got)
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void list.push(n.params));
    try {
      await chosen.setLoggingLevel('warning');
      expect(text(await chosen.callTool({ name: 'log_levels', arguments: {} }))).to.equal('logged');
      expect(text(await fallback.callTool({ name: 'log_levels', arguments: {} }))).to.equal('logged');
      expect(got.get(chosen)).to.deep.equal([
        { level: 'warning', logger: 'log_levels', data: { message: 'a warning line', disk: 'full' } },
        { level: 'error', logger: 'log_levels', data: 'an error line' },
      ]);
      // A session that set no level gets info and above.
      expect(got.get(fallback)!.map((p) => p.level)).to.deep.equal(['info', 'warning', 'error']);
      await chosen.setLoggingLevel('debug');
      got.get(chosen)!.length = 0;
      await chosen.callTool({ name: 'log_levels', arguments: {} });
      expect(got.get(chosen)!.map((p) => p.level)).to.deep.equal(['debug', 'info', 'warning', 'error']);
    } finally {
      await Promise.all([chosen.close(), fallback.close()]);
    }
  });

  it('primes each SSE stream with an event id and a retry, and replays what a client missed after Last-Event-ID', async () => {
    const session = await openSession(server.url);
    const file = join(tmp.dir, 'resumed.txt');
    const dropped = new AbortController();
    const res = await post(
      server.url,
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'write_later', arguments: { path: file, ms: 300 } },
      },
      session,
      dropped.signal,
    );
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    const priming = await readUntil(res.body!, (t) => t.includes('\n\n'));
    const [, primingId] = /^id: (\S+)\nretry: 1000\ndata: \n\n/.exec(priming) ?? [];
    expect(primingId, priming).to.be.a('string');
    dropped.abort(); // the connection breaks mid-call

    // A session outlives a broken stream: the call runs on.
    await until(() => existsSync(file), { message: 'the call to finish after its stream broke' });
    const resumed = new AbortController();
    const replay = await fetch(server.url, {
      headers: {
        accept: 'text/event-stream',
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-11-25',
        'last-event-id': primingId!,
      },
      signal: resumed.signal,
    });
    expect(replay.status).to.equal(200);
    const events = await readUntil(replay.body!, (t) => t.includes('"id":3'));
    resumed.abort();
    const [, eventId, data] = /id: (\S+)\ndata: (.*)\n/.exec(events) ?? [];
    expect(eventId).to.not.equal(primingId);
    expect(JSON.parse(data!)).to.deep.include({
      id: 3,
      result: { content: [{ type: 'text', text: 'written' }] },
    });
    expect((await fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': session } })).status).to.equal(
      200,
    );
  });

  it('serves a host that another host loads as an MCP plugin by URL, in one session', async () => {
    const before = server.sessions();
    const consumer = await hostOfRemote(server.url);
    try {
      const file = join(tmp.dir, 'remote.txt');
      expect(await consumer.call('remote_write_later', { path: file, ms: 0 })).to.include({
        isError: false,
        content: 'written',
      });
      expect(await consumer.call('remote_log_levels', {})).to.include({ isError: false, content: 'logged' });
      expect(server.sessions()).to.equal(before + 1);
    } finally {
      await consumer.close();
    }
  });

  it('answers 404 for a session id it does not know, naming it', async () => {
    const res = await ping(server.url, 'no-such-session');
    expect(res.status).to.equal(404);
    const body = (await res.json()) as { error: { code: number; message: string } };
    expect(body.error.code).to.equal(-32001);
    expect(body.error.message).to.contain('Session not found: no-such-session');
  });

  it('answers 400 to a request without a session that is no initialize', async () => {
    const res = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.status).to.equal(400);
  });
});

describe('serveMcpHttp: session limits', function () {
  this.timeout(20_000);
  let host: Host;

  before(async () => {
    host = await allowingHost([{ module: './sessions.ts', isolation: 'inline' }]);
  });
  after(() => host.close());

  it('closes a session idle past sessionIdleMs; its id then gets 404', async () => {
    const server = await serveMcpHttp(host, { port: 0, sessionIdleMs: 100 });
    try {
      const session = await openSession(server.url);
      expect(server.sessions()).to.equal(1);
      await until(() => server.sessions() === 0, { message: 'the idle session to close' });
      expect((await ping(server.url, session)).status).to.equal(404);
    } finally {
      await server.close();
    }
  });

  it('keeps at most maxSessions: a new one closes the one idle longest, and with none idle it is refused (503)', async () => {
    const server = await serveMcpHttp(host, { port: 0, maxSessions: 2 });
    const streams = new AbortController();
    try {
      const [a, b] = [await openSession(server.url), await openSession(server.url)];
      expect((await ping(server.url, a)).status).to.equal(200); // a was used last: b is idle longest
      const c = await openSession(server.url);
      expect(server.sessions()).to.equal(2);
      expect((await ping(server.url, b)).status).to.equal(404);
      expect((await ping(server.url, a)).status).to.equal(200);

      // Both sessions hold a notification stream open: neither is idle.
      for (const session of [a, c]) {
        const res = await fetch(server.url, {
          headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
          signal: streams.signal,
        });
        expect(res.status).to.equal(200);
      }
      const refused = await post(server.url, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      });
      expect(refused.status).to.equal(503);
      expect(((await refused.json()) as { error: { message: string } }).error.message).to.contain('all 2 are busy');
    } finally {
      streams.abort();
      await server.close();
    }
  });

  it('keeps one caller to maxSessionsPerCaller: their new session closes their own idle one, and another caller still gets in', async () => {
    // The caller is the bearer token as is: enough to tell two callers apart.
    const server = await serveMcpHttp(host, {
      port: 0,
      maxSessions: 4,
      maxSessionsPerCaller: 2,
      authenticate: (req) => {
        const name = req.headers.authorization?.replace(/^Bearer /, '');
        return name ? { name, scopes: [], via: 'token' } : undefined;
      },
    });
    const streams = new AbortController();
    const as = (caller: string) => ({ authorization: `Bearer ${caller}` });
    const initialize = (caller: string) =>
      fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: ACCEPT, ...as(caller) },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        }),
      });
    const open = async (caller: string) => {
      const res = await initialize(caller);
      expect(res.status, caller).to.equal(200);
      await res.text();
      return res.headers.get('mcp-session-id')!;
    };
    const holdStream = async (caller: string, session: string) => {
      const res = await fetch(server.url, {
        headers: {
          accept: 'text/event-stream',
          'mcp-session-id': session,
          'mcp-protocol-version': '2025-11-25',
          ...as(caller),
        },
        signal: streams.signal,
      });
      expect(res.status).to.equal(200);
    };
    try {
      const [a1, a2] = [await open('mallory'), await open('mallory')];
      // A third, with both idle: the one idle longest goes, the caller still holds two.
      const a3 = await open('mallory');
      expect(server.sessions()).to.equal(2);
      const pinged = await fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: ACCEPT,
          'mcp-session-id': a1,
          'mcp-protocol-version': '2025-11-25',
          ...as('mallory'),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
      });
      expect(pinged.status).to.equal(404);
      for (const session of [a2, a3]) await holdStream('mallory', session);
      const refused = await initialize('mallory');
      expect(refused.status).to.equal(503);
      expect(((await refused.json()) as { error: { message: string } }).error.message).to.contain(
        'all 2 sessions one caller may hold are busy',
      );
      // Two places are left for everyone else.
      await open('alice');
      await open('bob');
      expect(server.sessions()).to.equal(4);
    } finally {
      streams.abort();
      await server.close();
    }
  });

  it('holds maxSessions when clients initialize at the same moment: the places left go, the rest get 503 at once', async () => {
    const server = await serveMcpHttp(host, { port: 0, maxSessions: 3 });
    const streams = new AbortController();
    try {
      // One session already holds a stream open (busy): two places are left for eight clients at once.
      const busy = await openSession(server.url);
      const stream = await fetch(server.url, {
        headers: { accept: 'text/event-stream', 'mcp-session-id': busy, 'mcp-protocol-version': '2025-11-25' },
        signal: streams.signal,
      });
      expect(stream.status).to.equal(200);
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      });
      // Eight initializes whose bodies stop one byte short: each has been counted against the limit
      // before any of them can finish initializing.
      const statuses: number[] = [];
      const requests = Array.from({ length: 8 }, () => {
        const req = request(server.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: ACCEPT, 'content-length': Buffer.byteLength(body) },
        });
        const answered = new Promise<void>((done, fail) => {
          req.on('response', (res) => {
            statuses.push(res.statusCode ?? 0);
            res.resume();
            res.on('end', done);
          });
          req.on('error', fail);
        });
        req.write(body.slice(0, -1));
        return { req, answered };
      });
      await until(() => statuses.length === 6, { timeoutMs: 10_000, message: () => `six refusals, got ${statuses}` });
      expect(statuses).to.deep.equal([503, 503, 503, 503, 503, 503]);
      for (const { req } of requests) req.end(body.slice(-1));
      await Promise.all(requests.map((r) => r.answered));
      expect(statuses.filter((status) => status === 200)).to.have.length(2);
      expect(server.sessions()).to.equal(3);
      expect((await ping(server.url, busy)).status).to.equal(200);
    } finally {
      streams.abort();
      await server.close();
    }
  });
});
