// `rousseau-host serve` as a real child process: its startup line, the config it refuses, and a
// graceful shutdown on SIGTERM (the call in flight answered and audited, new connections refused,
// exit 0).
import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { BIN, FIXTURES, runCli, tempDir, until } from '../helpers.ts';

const TOKEN = 'serve-test-token-5f2b9c1e7a04d3';

/** A project whose one plugin is the kit (with `slow`), every call allowed, audited to audit.jsonl. */
function project(t: ReturnType<typeof tempDir>, serve: Record<string, unknown>): string {
  t.write('package.json', '{"name":"serve-test"}');
  return t.write(
    'rousseau.config.json',
    JSON.stringify({
      builtins: false,
      plugins: [{ module: join(FIXTURES, 'plugins', 'kit.ts'), isolation: 'inline' }],
      policy: { default: 'allow' },
      log: { audit: 'audit.jsonl' },
      serve,
    }),
  );
}

interface Served {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

async function startServe(dir: string, args: string[] = []): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    cwd: dir,
    env: { ...process.env, RH_TEST_TOKEN: TOKEN, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const url = await until(() => /at (http:\S+) /.exec(stderr)?.[1], {
    timeoutMs: 20_000,
    message: () => `the startup line; stderr: ${stderr}`,
  });
  return {
    child,
    url,
    stderr: () => `${stderr}${stdout ? `\n(stdout: ${stdout})` : ''}`,
    exited,
  };
}

async function connect(url: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'serve-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

const auditOf = (dir: string) => {
  const file = join(dir, 'audit.jsonl');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
};

describe('rousseau-host serve', function () {
  this.timeout(60_000);
  let t: ReturnType<typeof tempDir>;
  let served: Served | undefined;
  beforeEach(() => {
    t = tempDir('rh-serve-');
  });
  afterEach(() => {
    served?.child.kill('SIGKILL');
    served = undefined;
    t.cleanup();
  });

  // A `serve` costs ~1 s of CPU to start: the startup options (--host-id here, --host below) are
  // checked on the servers the shutdown tests start, not on servers of their own.
  it('on SIGTERM answers the call in flight, refuses new connections, audits the call and exits 0; the token is nowhere; --host-id marks session ids and audit lines', async () => {
    project(t, { auth: { tokens: [{ name: 'ci', tokenEnv: 'RH_TEST_TOKEN' }] }, shutdownTimeoutMs: 20_000 });
    // Debug logs: the most the server ever says, and still no token in it. --host-id as the hosts
    // behind a load balancer are started.
    served = await startServe(t.dir, ['--log-level', 'debug', '--host-id', 'h2']);
    expect(served.stderr()).to.include('/mcp (host h2, sessions; auth: bearer tokens (ci); Ctrl-C or SIGTERM stops)');
    const wrong = 'wrong-token-8d1e4f0b2c7a95';
    const refused = await fetch(served.url, { method: 'POST', headers: { authorization: `Bearer ${wrong}` } });
    expect(refused.status).to.equal(401);
    const { client, transport } = await connect(served.url);
    expect(transport.sessionId).to.match(/^h2\./);
    const call = client.callTool({ name: 'slow', arguments: { ms: 3000, tag: 'finished after SIGTERM' } });
    // The call has reached the tool once its decision is in the audit file.
    await until(() => auditOf(t.dir).includes('"decision"'), { message: () => `the decision; ${served!.stderr()}` });
    served.child.kill('SIGTERM');
    // Stopping: the listening socket is closed while the call still runs.
    await until(
      () =>
        fetch(served!.url, { method: 'POST' }).then(
          () => false,
          (error: Error) => /ECONNREFUSED/.test(String((error.cause as Error | undefined)?.message ?? error)),
        ),
      { timeoutMs: 2500, message: 'a refused connection' },
    );
    const result = (await call) as CallToolResult;
    expect(result.isError, JSON.stringify(result)).to.not.equal(true);
    expect((result.content[0] as { text: string }).text).to.equal('finished after SIGTERM');
    expect(await served.exited, served.stderr()).to.equal(0);
    await client.close().catch(() => {});
    const audit = auditOf(t.dir);
    const line = audit
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; tool: string; code?: string; outcome?: string; caller?: string })
      .find((l) => l.event === 'call' && l.tool === 'slow');
    expect(line).to.deep.include({ outcome: 'ok', caller: 'ci' });
    expect(audit).to.match(/"host":"h2","event":"call"/);
    for (const token of [TOKEN, wrong]) {
      expect(audit).to.not.include(token);
      expect(served.stderr()).to.not.include(token);
    }
  });

  it('cancels a call still running at serve.shutdownTimeoutMs, audits it as cancelled and exits 0; takes --host and --port over serve.host and serve.port, and says it serves loopback only without auth, and statelessly', async () => {
    project(t, { host: '127.0.0.2', port: 1, shutdownTimeoutMs: 300, stateless: true });
    served = await startServe(t.dir, ['--host', '127.0.0.1', '--host-id', 'h1']);
    expect(served.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(served.url).to.not.include(':1/');
    expect(served.stderr()).to.include('(host h1, stateless; auth: none, loopback only;');
    const { client } = await connect(served.url);
    // The SDK client keeps trying to resume the stream of a call whose server went away: no answer to wait for.
    void client.callTool({ name: 'slow', arguments: { ms: 30_000, tag: 'never' } }).catch(() => {});
    await until(() => auditOf(t.dir).includes('"decision"'), { message: () => `the decision; ${served!.stderr()}` });
    served.child.kill('SIGTERM');
    expect(await served.exited, served.stderr()).to.equal(0);
    await client.close().catch(() => {});
    expect(auditOf(t.dir)).to.match(/"event":"call".*"tool":"slow".*"code":"cancelled"/);
  });

  it('refuses to listen beyond loopback without serve.auth, saying what to add (RH_ERR_SERVE_NO_AUTH)', async () => {
    project(t, {});
    const r = await runCli(['serve', '--host', '0.0.0.0', '--port', '0', '--json'], { cwd: t.dir });
    expect(r.code, r.stderr).to.equal(1);
    expect(JSON.parse(r.stdout).error.code).to.equal('RH_ERR_SERVE_NO_AUTH');
    expect(r.stderr)
      .to.include('Refusing to serve on 0.0.0.0')
      .and.include("tokenEnv: 'ROUSSEAU_TOKEN_CI'")
      .and.include('ROUSSEAU_TOKEN_CI=$(openssl rand -hex 32)');
  });

  it("stops at start when a token's variable is not set, naming the token and the variable", async () => {
    project(t, { auth: { tokens: [{ name: 'deploy', tokenEnv: 'RH_TEST_NOT_SET' }] } });
    const r = await runCli(['serve', '--port', '0', '--json'], { cwd: t.dir, env: { RH_TEST_NOT_SET: '' } });
    expect(r.code, r.stderr).to.equal(1);
    expect(JSON.parse(r.stdout).error.code).to.equal('RH_ERR_SERVE_AUTH');
    expect(r.stderr).to.include('token "deploy"').and.include('RH_TEST_NOT_SET=$(openssl rand -hex 32)');
  });

  it('is a usage error for a port that is no number, and for a --host-id that is no id', async () => {
    const r = await runCli(['serve', '--port', 'eighty'], { cwd: t.dir });
    expect(r.code).to.equal(2);
    expect(r.stderr).to.include('--port takes a port number');
    project(t, { auth: { tokens: [{ name: 'ci', tokenEnv: 'RH_TEST_TOKEN' }] } });
    const bad = await runCli(['serve', '--port', '0', '--host-id', 'h2/x'], { cwd: t.dir });
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include('--host-id');
  });
});
