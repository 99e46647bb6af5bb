// The host as an MCP server, seen from the SDK's own client: `rousseau-host start --mcp` (the built
// bin, a real child process) and serveMcpHttp on a loopback port.
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Host } from '../../core/host.ts';
import { serveMcpHttp } from '../../core/mcp/serve.ts';
import tools from '../fixtures/mcp/tools.ts';
import {
  BIN,
  echoAuditingTo,
  FIXTURES,
  fullFifo,
  runCli,
  runCliProcess,
  spawnHttpHost,
  tempDir,
  until,
} from '../helpers.ts';
import { allowingHost, auditCodes, code, hostOfRemote, text } from './shared.ts';

const MCP = join(FIXTURES, 'mcp');

/** fetch() will not send a Host header of our choosing; node:http will (a DNS-rebinding request). */
function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { host, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
    req.end('{}');
  });
}

describe('rousseau-host start --mcp (stdio)', function () {
  this.timeout(20_000);
  const tmp = tempDir('rh-mcp-');
  const audit = join(tmp.dir, 'audit.jsonl');
  let client: Client;
  let transport: StdioClientTransport;
  let stderr = '';
  const listChanges: number[] = [];

  before(async () => {
    const config = tmp.write(
      'rousseau.config.json',
      JSON.stringify({
        builtins: false,
        plugins: [
          { module: join(MCP, 'tools.ts'), isolation: 'inline' },
          join(MCP, 'noisy.ts'),
          join(MCP, 'crashy.ts'),
        ],
        policy: { default: 'allow', ask: [{ tool: 'echo', match: '"text":"ask me"' }] },
        // One crash quarantines a worker plugin (crashy) for a second.
        isolation: { quarantine: { failures: 1, windowMs: 60_000, cooldownMs: 1000 } },
        log: { audit },
      }),
    );
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'start', '--mcp', '--config', config],
      cwd: tmp.dir,
      stderr: 'pipe',
    });
    transport.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    client = new Client({ name: 'test-client', version: '1.0.0' });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void listChanges.push(Date.now()));
    await client.connect(transport);
    // The worker plugins register as they load (test/mcp/startup.test.ts): these tests want them all.
    await until(async () => (await client.listTools()).tools.length === 8, { timeoutMs: 15_000 });
    listChanges.length = 0;
  });
  after(async () => {
    await client.close();
    tmp.cleanup();
  });

  it('initializes as rousseau-host, promising tools/list_changed and logging', () => {
    expect(client.getServerVersion()?.name).to.equal('rousseau-host');
    expect(client.getServerCapabilities()?.tools).to.deep.equal({ listChanged: true });
    expect(client.getServerCapabilities()?.logging).to.deep.equal({});
  });

  it('lists every tool sorted by name, with our exact schema and mapped annotations', async () => {
    const { tools: listed } = await client.listTools();
    const names = listed.map((t) => t.name);
    expect(names).to.deep.equal(['chatty', 'crash', 'echo', 'fail', 'noisy_add', 'progress', 'stall', 'wait']);
    const echo = listed.find((t) => t.name === 'echo')!;
    expect(echo.inputSchema).to.deep.equal(JSON.parse(JSON.stringify(tools.tools![0]!.inputSchema)));
    expect(echo.title).to.equal('Echo');
    expect(echo.annotations).to.deep.equal({
      title: 'Echo',
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(listed.find((t) => t.name === 'fail')!.annotations).to.deep.equal({ destructiveHint: true });
  });

  it('calls a tool through the pipeline', async () => {
    const r = await client.callTool({ name: 'echo', arguments: { text: 'héllo' } });
    expect(r.isError).to.not.equal(true);
    expect(text(r)).to.equal('héllo');
    const sum = await client.callTool({ name: 'noisy_add', arguments: { a: 2, b: 3 } });
    expect(text(sum)).to.equal('5');
    expect(sum.structuredContent).to.deep.equal({ sum: 5 });
  });

  it('answers every failure with an isError result, never a JSON-RPC error', async () => {
    const failed = await client.callTool({ name: 'fail', arguments: { message: 'boom' } });
    expect(failed.isError).to.equal(true);
    expect(text(failed)).to.include('boom');
    expect(code(failed)).to.equal('tool_error');
    const unknown = await client.callTool({ name: 'nope', arguments: {} });
    expect([unknown.isError, code(unknown)]).to.deep.equal([true, 'unknown_tool']);
    const invalid = await client.callTool({ name: 'echo', arguments: { text: 42 } });
    expect([invalid.isError, code(invalid)]).to.deep.equal([true, 'invalid_input']);
    expect(text(invalid)).to.include('/text');
  });

  it('denies an `ask` call: there is no terminal and no --yes', async () => {
    const r = await client.callTool({ name: 'echo', arguments: { text: 'ask me' } });
    expect([r.isError, code(r)]).to.deep.equal([true, 'denied']);
  });

  it('times a call out with an isError result', async () => {
    const r = await client.callTool({ name: 'stall', arguments: {} });
    expect([r.isError, code(r)]).to.deep.equal([true, 'timeout']);
    expect(text(r)).to.include('300 ms');
  });

  it('aborts the call when the client cancels it (notifications/cancelled)', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort('user cancelled'), 150);
    let thrown: unknown;
    await client
      .callTool({ name: 'wait', arguments: {} }, undefined, { signal: controller.signal })
      .catch((e: unknown) => (thrown = e));
    expect(thrown).to.be.instanceOf(Error);
    // The host saw it: the audit trail records the call as cancelled, long before the plugin's timeout.
    await until(() => auditCodes(audit).includes('wait:cancelled'), { timeoutMs: 8000, message: 'the audit record' });
  });

  it('sends progress notifications when the client asks for them', async () => {
    const seen: unknown[] = [];
    const sent: unknown[] = [];
    const deliver = transport.onmessage!;
    transport.onmessage = (message) => {
      if ('method' in message && message.method === 'notifications/progress') {
        const { progressToken: _, ...progress } = message.params as Record<string, unknown>;
        sent.push(progress);
      }
      deliver(message);
    };
    try {
      const r = await client.callTool({ name: 'progress', arguments: {} }, undefined, {
        onprogress: (p) => seen.push(p),
      });
      expect(text(r)).to.equal('done');
    } finally {
      transport.onmessage = deliver;
    }
    const steps = [1, 2, 3].map((progress) => ({ progress, total: 3, message: `step ${progress}` }));
    expect(sent).to.deep.equal(steps);
    // The SDK client drops progress it reads in the same chunk as the result (typescript-sdk#2580).
    // The host waits a moment after the last one (core/mcp/server.ts), which a busy machine can
    // outlast: what reached the callback is the steps in order, all of them unless the last were cut.
    expect(seen).to.deep.equal(steps.slice(0, seen.length));
  });

  it('keeps the stream clean when plugins print to stdout (inline and in a worker, loading and calling)', async () => {
    expect(text(await client.callTool({ name: 'chatty', arguments: {} }))).to.equal('spoke');
    expect(text(await client.callTool({ name: 'noisy_add', arguments: { a: 1, b: 1 } }))).to.equal('2');
    expect(text(await client.callTool({ name: 'echo', arguments: { text: 'still here' } }))).to.equal('still here');
    await until(
      () =>
        [
          'noisy plugin: loading',
          'chatty: console.log noise',
          'chatty: raw stdout noise',
          'noisy: adding 1 and 1',
          'noisy: raw write',
        ].every((s) => stderr.includes(s)),
      { timeoutMs: 8000, message: 'the prints on stderr' },
    );
  });

  it('sends tools/list_changed when a plugin is quarantined, and again when it comes back', async () => {
    const r = await client.callTool({ name: 'crash', arguments: {} });
    expect([r.isError, code(r)]).to.deep.equal([true, 'crashed']);
    // Statuses are polled (every 500 ms, core/mcp/server.ts): a busy machine can show a poll the
    // crash before the quarantine, one notification more. Each step waits for its state and a
    // notification after the last one seen, not for a count.
    const names = async () => (await client.listTools()).tools.map((t) => t.name);
    await until(async () => listChanges.length >= 1 && !(await names()).includes('crash'), {
      timeoutMs: 8000,
      message: 'list_changed, and crash gone (quarantined)',
    });
    const seen = listChanges.length;
    await until(async () => listChanges.length > seen && (await names()).includes('crash'), {
      timeoutMs: 8000,
      message: 'list_changed, and crash back',
    });
  });

  it('exits when the client disconnects', async () => {
    const pid = transport.pid!;
    await client.close();
    await until(() => !isAlive(pid), { timeoutMs: 8000, message: 'the server to exit' });
  });
});

describe('rousseau-host start --mcp: while the plugins load', function () {
  this.timeout(20_000);
  const tmp = tempDir('rh-mcp-gate-');
  const gate = join(tmp.dir, 'open');
  let client: Client;

  before(() =>
    tmp.write(
      'rousseau.config.json',
      JSON.stringify({
        builtins: false,
        plugins: [
          { module: join(MCP, 'gate.ts'), isolation: 'inline', options: { file: gate }, loadTimeoutMs: 15_000 },
          { module: join(MCP, 'sessions.ts'), isolation: 'inline' },
        ],
        policy: { default: 'allow' },
        log: { audit: false },
      }),
    ),
  );
  after(async () => {
    await client?.close();
    tmp.cleanup();
  });

  it('answers initialize at once, and tools/list with what is in once its wait is out; the plugins behind the loading one appear once it has loaded', async () => {
    client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'start', '--mcp'],
        cwd: tmp.dir,
        stderr: 'pipe',
      }),
    );
    // Initialized while the gate plugin cannot have finished loading: its file does not exist yet.
    expect(existsSync(gate)).to.equal(false);
    expect(client.getServerVersion()?.name).to.equal('rousseau-host');
    // The sessions plugin comes after the gate in the config: it registers after it. The gate stays
    // shut through the list's wait (3 s, core/mcp/server.ts), so nothing is in when it is out.
    expect((await client.listTools()).tools).to.deep.equal([]);
    expect(existsSync(gate)).to.equal(false);
    tmp.write('open', '');
    const names = async () => (await client.listTools()).tools.map((t) => t.name);
    await until(async () => (await names()).length === 4, { timeoutMs: 10_000, message: 'the four tools' });
    expect(await names()).to.deep.equal(['log_levels', 'opened', 'session_of', 'write_later']);
    expect(text(await client.callTool({ name: 'opened', arguments: {} }))).to.equal('open');
  });

  it("sends a call's log entries at or above the level the client set, on stdio too", async () => {
    const got: { level: string; data: unknown }[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void got.push(n.params));
    await client.setLoggingLevel('error');
    expect(text(await client.callTool({ name: 'log_levels', arguments: {} }))).to.equal('logged');
    await until(() => got.length > 0, { message: 'the error entry' });
    expect(got).to.deep.equal([{ level: 'error', logger: 'log_levels', data: 'an error line' }]);
  });
});

describe('rousseau-host start --mcp: a config that cannot load', function () {
  this.timeout(20_000);

  it('fails with the config error on stderr and exit 1 (the server started before the config was read)', async () => {
    const tmp = tempDir('rh-mcp-bad-');
    try {
      tmp.write('rousseau.config.json', JSON.stringify({ builtins: false, plugins: 42 }));
      const init = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
      };
      const r = await runCliProcess(['start', '--mcp'], {
        cwd: tmp.dir,
        input: `${JSON.stringify(init)}\n`,
        timeoutMs: 15_000,
      });
      expect(r.code, r.stderr).to.equal(1);
      expect(r.stderr).to.contain('plugins');
    } finally {
      tmp.cleanup();
    }
  });
});

describe('rousseau-host start --stateless', () => {
  it('is a usage error without --mcp-http, naming the flag it needs', async () => {
    const r = await runCli(['start', '--mcp', '--stateless']);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.contain('--stateless applies to --mcp-http only');
  });
});

describe('rousseau-host start --host-id', () => {
  it('refuses an id a session id or a load balancer could not carry, saying what an id may hold', async () => {
    const r = await runCli(['start', '--mcp-http', '0', '--host-id', 'h1/evil']);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.contain('--host-id').and.contain('letters, digits').and.contain('"h1/evil"');
  });
});

describe('rousseau-host start --mcp-http: killed right after answering', function () {
  this.timeout(30_000);

  it('has audited every call it answered: the lines are in the file before the result goes out', async () => {
    const tmp = tempDir('rh-mcp-kill-');
    const config = {
      builtins: false,
      plugins: [{ module: join(FIXTURES, 'plugins', 'echo.ts'), isolation: 'inline' }],
      policy: { default: 'allow' },
      log: { audit: 'audit.jsonl' },
    };
    tmp.write('rousseau.config.json', JSON.stringify(config));
    const host = await spawnHttpHost(['--host-id', 'killed', '--cwd', tmp.dir]);
    try {
      const client = new Client({ name: 'test-client', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(host.url)));
      const answered = await Promise.all(
        Array.from({ length: 5 }, (_, i) => client.callTool({ name: 'echo', arguments: { text: `k${i}` } })),
      );
      // SIGKILL as the answers arrive: nothing the host still held in memory is written after this.
      expect(await host.stop('SIGKILL')).to.deep.include({ signal: 'SIGKILL' });
      expect(answered.map((r) => text(r))).to.deep.equal(['k0', 'k1', 'k2', 'k3', 'k4']);
      const calls = readFileSync(join(tmp.dir, 'audit.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; outcome?: string; host?: string })
        .filter((l) => l.event === 'call');
      expect(calls.map((l) => `${l.host}:${l.outcome}`)).to.deep.equal(Array(5).fill('killed:ok'));
    } finally {
      await host.stop('SIGKILL');
      tmp.cleanup();
    }
  });
});

describe('rousseau-host start --mcp: killed right after answering', function () {
  this.timeout(30_000);

  it('has audited the call it answered: its lines are in the file before the answer is written to stdout', async () => {
    const tmp = tempDir('rh-mcp-kill-');
    const config = {
      builtins: false,
      plugins: [{ module: join(FIXTURES, 'plugins', 'stall.ts'), isolation: 'inline' }],
      policy: { default: 'allow' },
      log: { audit: 'audit.jsonl' },
    };
    tmp.write('rousseau.config.json', JSON.stringify(config));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'start', '--mcp', '--host-id', 'killed'],
      cwd: tmp.dir,
      stderr: 'ignore',
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    try {
      await client.connect(transport);
      await until(async () => (await client.listTools()).tools.length === 1, { timeoutMs: 15_000 });
      // The tool answers, then blocks the host's event loop for 3 s: the audit's batch timer cannot
      // write the lines in that time, so only a write made before the answer left puts them there.
      expect(text(await client.callTool({ name: 'stall', arguments: {} }))).to.equal('ok');
      process.kill(transport.pid!, 'SIGKILL');
      await until(() => !isAlive(transport.pid!), { timeoutMs: 5000, message: 'the host to die' });
      const lines = readFileSync(join(tmp.dir, 'audit.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; outcome?: string; host?: string });
      expect(lines.map((l) => `${l.host}:${l.event}:${l.outcome ?? ''}`)).to.deep.equal([
        'killed:decision:',
        'killed:call:ok',
      ]);
    } finally {
      await client.close();
      tmp.cleanup();
    }
  });
});

describe('rousseau-host start --mcp / --mcp-http: an audit sink that is slow to take its lines', function () {
  this.timeout(30_000);

  for (const front of ['stdio', 'http'] as const) {
    it(`${front}: holds the answer until its lines are written (a FIFO no collector reads yet)`, async () => {
      const tmp = tempDir('rh-mcp-fifo-');
      const sink = tempDir('rh-mcp-fifo-sink-');
      const fifo = fullFifo(sink.dir);
      tmp.write('rousseau.config.json', JSON.stringify(echoAuditingTo(fifo.path)));
      const http = front === 'http' ? await spawnHttpHost(['--cwd', tmp.dir]) : undefined;
      const client = new Client({ name: 'test-client', version: '1.0.0' });
      try {
        const transport = http
          ? undefined
          : new StdioClientTransport({
              command: process.execPath,
              args: [BIN, 'start', '--mcp'],
              cwd: tmp.dir,
              stderr: 'ignore',
            });
        await client.connect(transport ?? new StreamableHTTPClientTransport(new URL(http!.url)));
        await until(async () => (await client.listTools()).tools.length === 1, { timeoutMs: 15_000 });
        let answered = false;
        const call = client.callTool({ name: 'echo', arguments: { text: 'held' } }).finally(() => (answered = true));
        // An answer sent ahead of its lines would have arrived by now.
        await fifo.writerWaits(http ? http.child.pid! : transport!.pid!);
        expect(answered, 'answered before its audit lines were written').to.equal(false);
        const lines = await fifo.lines();
        expect(text(await call)).to.equal('held');
        expect(lines.map((l) => (JSON.parse(l) as { event: string }).event)).to.deep.equal(['decision', 'call']);
      } finally {
        await client.close();
        await http?.stop('SIGKILL');
        fifo.close();
        tmp.cleanup();
        sink.cleanup();
      }
    });
  }
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('rousseau-host start --mcp: a line over the stdio limit', function () {
  this.timeout(30_000);
  const MCP_STDIO_MAX_LINE_BYTES = 10 * 1024 * 1024; // the documented limit

  it('is dropped, logged on stderr and answered with a JSON-RPC error naming the limit; the lines after it are served', async () => {
    const tmp = tempDir('rh-mcp-');
    try {
      tmp.write('rousseau.config.json', JSON.stringify({ builtins: false, log: { audit: false } }));
      const line = (message: unknown) => `${JSON.stringify(message)}\n`;
      const init = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
      };
      const ping = (id: number, bytes = 0) => {
        const text = JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });
        return `${text.slice(0, -1)}${' '.repeat(Math.max(0, bytes - text.length))}}\n`;
      };
      const input = line(init) + ping(2, MCP_STDIO_MAX_LINE_BYTES + 1) + ping(3, MCP_STDIO_MAX_LINE_BYTES) + ping(4);
      const r = await runCliProcess(['start', '--mcp'], { cwd: tmp.dir, input, timeoutMs: 25_000 });
      expect(r.code, r.stderr).to.equal(0);
      const answers = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: number | null; error?: { code: number; message: string } });
      expect(answers.map((a) => a.id)).to.deep.equal([1, null, 3, 4]);
      expect(answers[1]!.error!.code).to.equal(-32600);
      expect(answers[1]!.error!.message).to.contain(`${MCP_STDIO_MAX_LINE_BYTES} bytes`);
      expect(r.stderr).to.contain(`over the stdio limit of ${MCP_STDIO_MAX_LINE_BYTES} bytes`);
    } finally {
      tmp.cleanup();
    }
  });
});

describe('serveMcpHttp --stateless (Streamable HTTP, no sessions)', function () {
  this.timeout(20_000);
  const tmp = tempDir('rh-mcp-http-');
  const audit = join(tmp.dir, 'audit.jsonl');
  let host: Host;
  let server: { url: string; close(): Promise<void> };

  before(async () => {
    host = await allowingHost(
      [
        { module: '../plugins/echo.ts', isolation: 'inline' },
        { module: '../plugins/kit.ts', isolation: 'inline' },
      ],
      audit,
    );
    server = await serveMcpHttp(host, { port: 0, stateless: true });
  });
  after(async () => {
    await server.close();
    await host.close();
    tmp.cleanup();
  });

  it('binds to loopback and serves list and call to the SDK client, one stateless request at a time', async () => {
    expect(server.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(server.url));
    await client.connect(transport);
    try {
      expect(transport.sessionId).to.equal(undefined);
      expect(client.getServerCapabilities()?.tools).to.deep.equal({ listChanged: false });
      expect((await client.listTools()).tools.map((t) => t.name)).to.include.members(['echo', 'greet', 'fail']);
      expect(text(await client.callTool({ name: 'echo', arguments: { text: 'over http' } }))).to.equal('over http');
      const failed = await client.callTool({ name: 'fail', arguments: { message: 'bad' } });
      expect([failed.isError, code(failed)]).to.deep.equal([true, 'tool_error']);
    } finally {
      await client.close();
    }
  });

  it('refuses foreign origins and foreign Host names, and anything but POST /mcp', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const post = (headers: Record<string, string>, url = server.url) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(init),
      });
    expect((await post({ origin: 'https://evil.example' })).status).to.equal(403);
    expect((await post({ origin: 'null' })).status).to.equal(403);
    expect(await statusWithHost(server.url, `rebind.example:${new URL(server.url).port}`)).to.equal(403);
    expect((await post({ origin: 'http://localhost:5173' })).status).to.equal(200);
    expect((await post({}, server.url.replace('/mcp', '/other'))).status).to.equal(404);
    expect((await fetch(server.url, { method: 'GET' })).status).to.equal(405);
  });

  it('on loopback behind a proxy, answers the Host name of serve.publicUrl, and still no other', async () => {
    const proxied = await serveMcpHttp(host, { port: 0, stateless: true, publicUrl: 'https://tools.example.com/mcp' });
    try {
      const port = new URL(proxied.url).port;
      // nginx's `proxy_set_header Host $host` passes on the name without a port; $http_host keeps it.
      expect(await statusWithHost(proxied.url, 'tools.example.com')).to.not.equal(403);
      expect(await statusWithHost(proxied.url, `TOOLS.example.com:${port}`)).to.not.equal(403);
      expect(await statusWithHost(proxied.url, `127.0.0.1:${port}`)).to.not.equal(403);
      expect(await statusWithHost(proxied.url, 'rebind.example')).to.equal(403);
      expect(await statusWithHost(proxied.url, 'tools.example.com.rebind.example')).to.equal(403);
    } finally {
      await proxied.close();
    }
  });

  it('cancels the call when the client drops the request', async () => {
    const call = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'slow', arguments: { ms: 10_000, tag: 'dropped' } },
    };
    const req = request(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    });
    req.on('error', () => {}); // we hang up on purpose
    req.end(JSON.stringify(call));
    setTimeout(() => req.destroy(), 200);
    await until(() => auditCodes(audit).includes('slow:cancelled'), { timeoutMs: 8000, message: 'the audit record' });
  });

  it('serves a host that another host loads as an MCP plugin by URL', async () => {
    const consumer = await hostOfRemote(server.url);
    try {
      const names = consumer.tools().map((t) => t.name);
      expect(names).to.include.members(['remote_echo', 'remote_greet']);
      expect(await consumer.call('remote_echo', { text: 'round trip' })).to.include({
        isError: false,
        content: 'round trip',
      });
      expect(await consumer.call('remote_fail', { message: 'far away' })).to.include({
        isError: true,
        code: 'tool_error',
      });
    } finally {
      await consumer.close();
    }
  });
});
