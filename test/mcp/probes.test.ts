// /metrics, /healthz and /readyz on the MCP HTTP server: the exposition text parsed as a scraper
// would, plugin states and queues as they change, readiness as plugins fail and the host closes.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'chai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createHost, type Host } from '../../core/host.ts';
import { createHostMetrics, DURATION_BUCKETS, labels } from '../../core/mcp/metrics.ts';
import { createProbes } from '../../core/mcp/probes.ts';
import { serveMcpHttp } from '../../core/mcp/serve.ts';
import type { Caller } from '../../core/types.ts';
import { FIXTURES, tempDir, until } from '../helpers.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses Prometheus text format 0.0.4 strictly: every sample belongs to a family whose TYPE came
 * first, label values are unescaped, and anything else fails the test.
 */
function parseExposition(text: string): { types: Map<string, string>; samples: Sample[] } {
  expect(text.endsWith('\n')).to.equal(true);
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split('\n')) {
    const type = /^# TYPE ([a-zA-Z_:][\w:]*) (counter|gauge|histogram)$/.exec(line);
    if (type) {
      expect(types.has(type[1]!), `one TYPE line for ${type[1]}`).to.equal(false);
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line.startsWith('# HELP ')) continue;
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    expect(sample, `a sample line: ${JSON.stringify(line)}`).to.not.equal(null);
    const [, name, body = '', value] = sample!;
    const family = name!.replace(/_(bucket|sum|count)$/, '');
    expect(types.has(name!) || types.get(family) === 'histogram', `TYPE before ${name}`).to.equal(true);
    const parsed: Record<string, string> = {};
    const rest = body.replace(/([a-zA-Z_]\w*)="((?:[^"\\\n]|\\[\\"n])*)",?/g, (_, k: string, v: string) => {
      parsed[k] = v.replace(/\\([\\"n])/g, (_m, c: string) => (c === 'n' ? '\n' : c));
      return '';
    });
    expect(rest, `labels of ${line}`).to.equal('');
    samples.push({ name: name!, labels: parsed, value: Number(value) });
  }
  return { types, samples };
}

function find(samples: Sample[], name: string, where: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v));
}

const get = (url: string, path: string, init?: RequestInit) => fetch(new URL(path, url), init);

describe('MCP HTTP probes: /metrics, /healthz, /readyz', function () {
  this.timeout(20_000);
  const tmp = tempDir('rh-probes-');
  const kit = { module: join(FIXTURES, 'plugins', 'kit.ts'), isolation: 'inline' as const, loadTimeoutMs: 60_000 };
  let host: Host;
  let server: Awaited<ReturnType<typeof serveMcpHttp>>;

  before(async () => {
    host = await createHost({
      cwd: tmp.dir,
      audit: false,
      logLevel: 'error',
      config: {
        builtins: false,
        plugins: [{ ...kit, maxConcurrency: 1, maxQueue: 4 }],
        policy: { default: 'allow', deny: [{ tool: 'fail', match: 'forbidden' }] },
      },
    });
    server = await serveMcpHttp(host, { port: 0 });
  });
  after(async () => {
    await server.close();
    await host.close();
    tmp.cleanup();
  });

  it('counts calls by tool, plugin, code and caller, with an escaped caller name, from the host and over MCP', async () => {
    const odd: Caller = { name: 'ci "bot"\\\nnext line', scopes: [], via: 'oauth' };
    for (let i = 0; i < 5; i++) await host.call('greet', { who: `n${i}` }, { caller: odd });
    await host.call('fail', { message: 'boom' }, { caller: odd });
    await host.call('fail', { message: 'forbidden' });
    await host.call('made_up_tool', {});
    const client = new Client({ name: 'probe-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    try {
      await client.callTool({ name: 'greet', arguments: { who: 'mcp' } });
      const response = await get(server.url, '/metrics');
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
      const { types, samples } = parseExposition(await response.text());
      expect(types.get('rousseau_tool_calls_total')).to.equal('counter');
      const calls = find(samples, 'rousseau_tool_calls_total').map((s) => [
        s.labels.tool,
        s.labels.plugin,
        s.labels.code,
        s.labels.caller,
        s.value,
      ]);
      expect(calls).to.have.deep.members([
        ['greet', 'kit', 'ok', odd.name, 5],
        ['fail', 'kit', 'tool_error', odd.name, 1],
        ['fail', 'kit', 'denied', '', 1],
        ['', '', 'unknown_tool', '', 1],
        ['greet', 'kit', 'ok', '', 1],
      ]);
      expect(find(samples, 'rousseau_mcp_sessions')[0]!.value).to.equal(1);
      expect(find(samples, 'rousseau_plugin_state', { plugin: 'kit', state: 'loaded' })[0]!.value).to.equal(1);
      expect(find(samples, 'rousseau_plugin_state', { plugin: 'kit', state: 'failed' })[0]!.value).to.equal(0);
      expect(find(samples, 'process_resident_memory_bytes')[0]!.value).to.be.above(0);
    } finally {
      await client.close();
    }
  });

  it('keeps a duration histogram per tool: buckets cumulative up to +Inf, which equals _count; _sum in seconds', async () => {
    await host.call('slow', { ms: 30, tag: 'a' });
    await host.call('slow', { ms: 30, tag: 'b' });
    const { types, samples } = parseExposition(await (await get(server.url, '/metrics')).text());
    expect(types.get('rousseau_tool_call_duration_seconds')).to.equal('histogram');
    const where = { tool: 'slow', plugin: 'kit' };
    const buckets = find(samples, 'rousseau_tool_call_duration_seconds_bucket', where);
    expect(buckets.map((b) => b.labels.le)).to.deep.equal([...DURATION_BUCKETS.map(String), '+Inf']);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).to.be.at.least(buckets[i - 1]!.value);
    // Each call slept 30 ms: none is in a bucket below 25 ms, both are by 60 s.
    expect(find(samples, 'rousseau_tool_call_duration_seconds_bucket', { ...where, le: '0.025' })[0]!.value).to.equal(
      0,
    );
    expect(find(samples, 'rousseau_tool_call_duration_seconds_bucket', { ...where, le: '60' })[0]!.value).to.equal(2);
    const count = find(samples, 'rousseau_tool_call_duration_seconds_count', where)[0]!.value;
    expect(count).to.equal(2);
    expect(buckets.at(-1)!.value).to.equal(count);
    // A timer counts from the event loop's clock, read when its turn began: each 30 ms sleep may
    // measure up to 1 ms short (a run saw 59.966 ms for the two).
    expect(find(samples, 'rousseau_tool_call_duration_seconds_sum', where)[0]!.value).to.be.within(0.058, 60);
  });

  it("shows a plugin's calls running and queued while they are", async () => {
    const metric = async (name: string) => {
      const { samples } = parseExposition(await (await get(server.url, '/metrics')).text());
      return find(samples, name, { plugin: 'kit' })[0]!.value;
    };
    expect(await metric('rousseau_plugin_calls_running')).to.equal(0);
    // maxConcurrency 1: the first holds the slot, the other two wait for it.
    const calls = [1, 2, 3].map((i) => host.call('slow', { ms: 400, tag: `q${i}` }));
    await until(async () => (await metric('rousseau_plugin_calls_queued')) === 2, { message: 'two calls queued' });
    expect(await metric('rousseau_plugin_calls_running')).to.equal(1);
    await Promise.all(calls);
    expect(await metric('rousseau_plugin_calls_queued')).to.equal(0);
    expect(await metric('rousseau_plugin_calls_running')).to.equal(0);
  });

  it('answers /healthz and /readyz without credentials, GET and HEAD only', async () => {
    const health = await get(server.url, '/healthz');
    expect([health.status, await health.text()]).to.deep.equal([200, 'ok\n']);
    const ready = await get(server.url, '/readyz');
    expect([ready.status, await ready.json()]).to.deep.equal([200, { ready: true, status: 'ready' }]);
    const head = await get(server.url, '/readyz', { method: 'HEAD' });
    expect([head.status, await head.text()]).to.deep.equal([200, '']);
    const post = await get(server.url, '/metrics', { method: 'POST' });
    expect(post.status).to.equal(405);
    expect(post.headers.get('allow')).to.equal('GET, HEAD');
  });
});

describe('/readyz when the host cannot serve', function () {
  this.timeout(20_000);

  it('is 503 counting a plugin that failed to load without naming it, and 503 shutting down once the host closes', async () => {
    const tmp = tempDir('rh-readyz-');
    const host = await createHost({
      cwd: tmp.dir,
      audit: false,
      logLevel: 'silent',
      config: {
        builtins: false,
        plugins: [
          { module: join(FIXTURES, 'plugins', 'echo.ts'), isolation: 'inline' },
          { module: join(FIXTURES, 'plugins', 'broken-import.ts'), isolation: 'inline' },
        ],
      },
    });
    const server = await serveMcpHttp(host, { port: 0 });
    try {
      const failed = host.plugins().find((p) => p.status === 'failed')!;
      const ready = await get(server.url, '/readyz');
      expect(ready.status).to.equal(503);
      const body = await ready.text();
      expect(JSON.parse(body)).to.deep.equal({
        ready: false,
        status: 'plugins_not_loaded',
        notLoaded: { failed: 1, quarantined: 0 },
      });
      expect(body, 'an unauthenticated probe names no plugin').to.not.include(failed.name);
      const { samples } = parseExposition(await (await get(server.url, '/metrics')).text());
      expect(find(samples, 'rousseau_plugin_state', { plugin: failed.name, state: 'failed' })[0]!.value).to.equal(1);
      expect((await get(server.url, '/healthz')).status).to.equal(200);

      await host.close();
      const closing = await get(server.url, '/readyz');
      expect([closing.status, await closing.json()]).to.deep.equal([503, { ready: false, status: 'shutting_down' }]);
    } finally {
      await server.close();
      await host.close();
      tmp.cleanup();
    }
  });
});

describe('/readyz while a plugin rests in quarantine', function () {
  this.timeout(60_000);

  it('is 503 counting the quarantined plugin, and ready again once its cooldown has passed', async () => {
    const tmp = tempDir('rh-readyz-quarantine-');
    // The crash budget's clock runs ahead by `skipped`: the cooldown passes without being waited out.
    let skipped = 0;
    const host = await createHost({
      cwd: tmp.dir,
      audit: false,
      logLevel: 'silent',
      clock: () => Date.now() + skipped,
      config: {
        builtins: false,
        plugins: [{ module: join(FIXTURES, 'mcp', 'crashy.ts'), isolation: 'worker', loadTimeoutMs: 60_000 }],
        policy: { default: 'allow' },
        isolation: { quarantine: { failures: 1, windowMs: 60_000, cooldownMs: 60_000 } },
      },
    });
    const server = await serveMcpHttp(host, { port: 0 });
    try {
      expect((await get(server.url, '/readyz')).status).to.equal(200);
      expect((await host.call('crash', {})).code).to.equal('crashed');
      const resting = await get(server.url, '/readyz');
      expect([resting.status, await resting.json()]).to.deep.equal([
        503,
        {
          ready: false,
          status: 'plugins_not_loaded',
          notLoaded: { failed: 0, quarantined: 1 },
        },
      ]);
      const { samples } = parseExposition(await (await get(server.url, '/metrics')).text());
      const states = find(samples, 'rousseau_plugin_state', { plugin: 'crashy' }).map((s) => [s.labels.state, s.value]);
      expect(states).to.deep.equal([
        ['loaded', 0],
        ['failed', 0],
        ['quarantined', 1],
      ]);
      skipped = 60_000;
      expect((await get(server.url, '/readyz')).status).to.equal(200);
    } finally {
      await server.close();
      await host.close();
      tmp.cleanup();
    }
  });
});

describe('probes behind authentication', function () {
  this.timeout(20_000);

  it('asks authorizeMetrics about /metrics only: it answers a refusal itself, and /healthz and /readyz stay open', async () => {
    const tmp = tempDir('rh-probes-auth-');
    const host = await createHost({
      cwd: tmp.dir,
      audit: false,
      logLevel: 'error',
      config: { builtins: false, plugins: [{ module: join(FIXTURES, 'plugins', 'echo.ts'), isolation: 'inline' }] },
    });
    const asked: string[] = [];
    const probes = createProbes(host, {
      closing: () => false,
      authorizeMetrics: async (req, res) => {
        asked.push(req.url ?? '');
        if (req.headers.authorization === 'Bearer right') return true;
        res.writeHead(401, { 'www-authenticate': 'Bearer' });
        res.end();
        return false;
      },
    });
    const http = createServer((req, res) => {
      void probes.answer(req, res, new URL(req.url ?? '/', 'http://localhost').pathname).then((answered) => {
        if (!answered) res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    try {
      const refused = await get(url, '/metrics');
      expect([refused.status, refused.headers.get('www-authenticate')]).to.deep.equal([401, 'Bearer']);
      const allowed = await get(url, '/metrics', { headers: { authorization: 'Bearer right' } });
      expect(allowed.status).to.equal(200);
      expect(await allowed.text()).to.include('# TYPE rousseau_tool_calls_total counter');
      expect((await get(url, '/healthz')).status).to.equal(200);
      expect((await get(url, '/readyz')).status).to.equal(200);
      expect((await get(url, '/mcp')).status).to.equal(404);
      expect(asked).to.deep.equal(['/metrics', '/metrics']);
    } finally {
      probes.close();
      await new Promise((resolve) => http.close(resolve));
      await host.close();
      tmp.cleanup();
    }
  });
});

describe('host metrics', () => {
  it('counts at most maxCallers callers by name, and the rest as caller="other"', async () => {
    const tmp = tempDir('rh-metrics-');
    const host = await createHost({
      cwd: tmp.dir,
      audit: false,
      logLevel: 'error',
      config: { builtins: false, plugins: [{ module: join(FIXTURES, 'plugins', 'echo.ts'), isolation: 'inline' }] },
    });
    const metrics = createHostMetrics(host, {}, 2);
    try {
      const tool = host.tools()[0]!.name;
      for (const name of ['a', 'b', 'c', 'd', 'a'])
        await host.call(tool, { text: 'x' }, { caller: { name, scopes: [], via: 'token' } });
      metrics.close();
      await host.call(tool, { text: 'x' }, { caller: { name: 'a', scopes: [], via: 'token' } }); // not counted: closed
      const { samples } = parseExposition(metrics.render());
      const byCaller = Object.fromEntries(
        find(samples, 'rousseau_tool_calls_total').map((s) => [s.labels.caller, s.value]),
      );
      expect(byCaller).to.deep.equal({ a: 2, b: 1, other: 2 });
    } finally {
      await host.close();
      tmp.cleanup();
    }
  });

  it('tells onCallEnd listeners of each call; one that throws leaves the result as it was', async () => {
    const tmp = tempDir('rh-call-end-');
    const host = await createHost({
      cwd: tmp.dir,
      audit: false,
      logLevel: 'silent',
      config: { builtins: false, plugins: [{ module: join(FIXTURES, 'plugins', 'echo.ts'), isolation: 'inline' }] },
    });
    try {
      const heard: string[] = [];
      const stopThrowing = host.onCallEnd(() => {
        throw new Error('listener bug');
      });
      const stop = host.onCallEnd((end) => heard.push(`${end.plugin}/${end.tool}:${end.result.content}`));
      const result = await host.call('echo', { text: 'hi' }, { callId: 'c1' });
      expect([result.isError, result.content]).to.deep.equal([false, 'hi']);
      stop();
      stopThrowing();
      await host.call('echo', { text: 'unheard' });
      expect(heard).to.deep.equal(['echo/echo:hi']);
    } finally {
      await host.close();
      tmp.cleanup();
    }
  });

  it('escapes backslash, double quote and newline in label values, and nothing else', () => {
    expect(labels({ caller: 'a\\b"c\nd é' })).to.equal('caller="a\\\\b\\"c\\nd é"');
  });
});
