// MCP servers as plugins: a real fixture server (test/fixtures/mcp/server.mjs, written with the SDK)
// spawned by a real host through the loader, called through the whole pipeline.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createHost, type Host } from '../../core/host.ts';
import type { HostConfig } from '../../core/config-schema.ts';
import type { Logger } from '../../core/log.ts';
import { PNG } from '../fixtures/plugins/rich.ts';
import { capturingLogger, FIXTURES, until } from '../helpers.ts';

const SERVER = join(FIXTURES, 'mcp', 'server.mjs');
const HTTP_SERVER = join(FIXTURES, 'mcp', 'http-server.mjs');
const RICH_SERVER = join(FIXTURES, 'mcp', 'rich-server.mjs');

/** Starts the Streamable HTTP fixture on `port` (0: any); resolves once it listens, with its port. */
function startHttpServer(port = 0): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HTTP_SERVER, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.once('error', reject);
    child.stdout!.once('data', (chunk: Buffer) =>
      resolve({ child, port: Number(/listening (\d+)/.exec(chunk.toString())![1]) }),
    );
  });
}

function stopped(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

function fixture(name: string, extra: Record<string, unknown> = {}) {
  return { name, mcp: { command: process.execPath, args: [SERVER] }, ...extra };
}

async function hostWith(plugins: unknown[], extra: Partial<HostConfig> = {}, logger?: Logger): Promise<Host> {
  return createHost({
    cwd: FIXTURES,
    audit: false,
    logLevel: 'error',
    ...(logger ? { logger } : {}),
    config: { builtins: false, policy: { default: 'allow' }, plugins: plugins as HostConfig['plugins'], ...extra },
  });
}

async function serverPid(host: Host, tool: string): Promise<number> {
  const r = await host.call(tool, {});
  expect(r.isError, r.content).to.equal(false);
  return (JSON.parse(r.content) as { pid: number }).pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('MCP servers as plugins', function () {
  this.timeout(20_000);
  let host: Host;

  // One host for the describe, its servers ~0.55 s of CPU apiece to start: beside them, a server
  // that cannot start; the last test closes it.
  before(async () => {
    host = await hostWith([
      fixture('fixture', { timeoutMs: 3000 }),
      fixture('quick', { timeoutMs: 300 }),
      { name: 'missing', mcp: { command: join(FIXTURES, 'mcp', 'no-such-server') } },
    ]);
  });
  after(() => host.close());

  it('lists the server tools under provider-safe, prefixed names, warning about collisions and style', () => {
    const status = host.plugins().find((p) => p.name === 'fixture')!;
    expect(status.status).to.equal('loaded');
    expect(status.isolation).to.equal('process');
    expect(status.version).to.equal('2.1.0');
    expect(status.tools.map((t) => t.name)).to.include.members([
      'fixture_echo',
      'fixture_add',
      'fixture_dotted_name',
      'fixture_dotted_name_2',
    ]);
    for (const t of status.tools) expect(t.name).to.match(/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/);
    const warnings = status.warnings!.map((w) => `${w.tool} ${w.pointer} ${w.message}`);
    expect(warnings.some((w) => w.startsWith('fixture_dotted_name_2 ') && w.includes('"dotted_name"'))).to.equal(true);
    // `add`'s properties have no description: only a warning for an MCP server.
    expect(warnings.some((w) => w.includes('fixture_add /tools/') && w.includes('properties/a/description'))).to.equal(
      true,
    );
    // The hints come through, except readOnly, which the policy must not trust from a server.
    const echo = status.tools.find((t) => t.name === 'fixture_echo')!;
    expect(echo.annotations).to.deep.equal({ openWorld: false });
  });

  it('calls tools through the pipeline: text, structured data, an isError result, invalid input', async () => {
    expect(await host.call('fixture_echo', { text: 'héllo' })).to.include({ isError: false, content: 'héllo' });
    const add = await host.call('fixture_add', '{"a": 2, "b": 3}');
    expect(add).to.include({ isError: false, content: '5' });
    expect(add.data).to.deep.equal({ sum: 5 });
    expect(await host.call('fixture_fail', {})).to.include({
      isError: true,
      code: 'tool_error',
      content: 'it went wrong',
    });
    // Validated on our side, against the server's schema, before anything is sent.
    expect(await host.call('fixture_add', { a: 'two', b: 3 })).to.include({ isError: true, code: 'invalid_input' });
    expect(await host.call('fixture_dotted_name_2', {})).to.include({ content: 'dotted_name' });
  });

  it('relays progress notifications to the caller', async () => {
    const seen: unknown[] = [];
    const r = await host.call('fixture_progress', {}, { onProgress: (p) => seen.push(p) });
    expect(r.content).to.equal('done');
    expect(seen).to.deep.equal([1, 2, 3].map((done) => ({ done, total: 3 })));
  });

  it('times out a hanging tool and cancels it on the server (notifications/cancelled)', async () => {
    const r = await host.call('quick_hang', {});
    // The server answers a cancelled call: a timeout code shows the host answered first, at its timeout.
    expect(r).to.include({ isError: true, code: 'timeout' });
    await until(
      async () => {
        const stats = JSON.parse((await host.call('quick_stats', {})).content) as { cancelled: number };
        return stats.cancelled >= 1;
      },
      { message: 'the server to see the cancellation' },
    );
  });

  it('cancels a call when the caller aborts', async () => {
    const controller = new AbortController();
    const pending = host.call('fixture_hang', {}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(await pending).to.include({ isError: true, code: 'cancelled' });
    await until(
      async () => {
        const stats = JSON.parse((await host.call('fixture_stats', {})).content) as { cancelled: number };
        return stats.cancelled >= 1;
      },
      { message: 'the server to see the cancellation' },
    );
  });

  it('restarts a server killed mid-call; the call in flight ends as crashed', async () => {
    const before = await serverPid(host, 'fixture_stats');
    const pending = host.call('fixture_hang', {});
    setTimeout(() => process.kill(before, 'SIGKILL'), 50);
    const r = await pending;
    expect(r).to.include({ isError: true, code: 'crashed' });
    const after = await until(
      async () => {
        const s = await host.call('fixture_stats', {});
        return s.isError ? undefined : (JSON.parse(s.content) as { pid: number }).pid;
      },
      { message: 'a restarted server' },
    );
    expect(after).to.not.equal(before);
    expect(await host.call('fixture_echo', { text: 'back' })).to.include({ isError: false, content: 'back' });
  });

  it('fails only the plugin whose server cannot start, naming it', () => {
    const missing = host.plugins().find((p) => p.name === 'missing')!;
    expect(missing.status).to.equal('failed');
    expect(missing.error!.code, missing.error!.message).to.equal('RH_ERR_MCP_CONNECT');
    expect(missing.error!.message).to.include("'missing'");
    expect(host.plugins().find((p) => p.name === 'fixture')!.status).to.equal('loaded');
  });

  // Last: it closes the describe's host (the `after` hook's close is then a no-op).
  it('ends every server process on close, including one restarted after a crash', async () => {
    const first = await serverPid(host, 'fixture_stats');
    expect(await host.call('fixture_die', {})).to.include({ code: 'crashed' });
    const pids = [
      await until(
        async () => ((await host.call('fixture_stats', {})).isError ? undefined : serverPid(host, 'fixture_stats')),
        { message: 'a restart' },
      ),
      await serverPid(host, 'quick_stats'),
    ];
    expect(pids[0]).to.not.equal(first);
    for (const pid of pids) expect(alive(pid)).to.equal(true);
    await host.close();
    await until(() => pids.every((pid) => !alive(pid)), { message: 'every server to exit' });
  });
});

describe('MCP servers as plugins: rich results', function () {
  this.timeout(20_000);
  let host: Host;

  before(async () => {
    host = await hostWith([{ name: 'srv', mcp: { command: process.execPath, args: [RICH_SERVER] } }]);
  });
  after(() => host.close());

  it("keeps a server's image as an image block, byte for byte, and names it in the text", async () => {
    const r = await host.call('srv_screenshot', {});
    expect(r.isError, r.content).to.equal(false);
    expect(r.blocks).to.deep.equal([
      { type: 'text', text: 'the screen' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
    ]);
    expect(r.content).to.equal('the screen\n[image image/png, 70 B]');
  });

  it('keeps audio, resource links and embedded resources as blocks', async () => {
    const r = await host.call('srv_media', {});
    expect(r.blocks?.map((b) => b.type)).to.deep.equal(['audio', 'resource_link', 'resource', 'resource']);
    expect(r.blocks?.[1]).to.deep.equal({
      type: 'resource_link',
      uri: 'file:///notes.md',
      name: 'notes',
      mimeType: 'text/markdown',
    });
    expect(r.content).to.contain('[resource file:///b.bin application/octet-stream, 3 B]');
  });

  it("keeps the server's outputSchema and takes its structuredContent as data", async () => {
    const tool = host.tools().find((t) => t.name === 'srv_read_text_file');
    expect(tool?.outputSchema).to.deep.include({ type: 'object', required: ['content'] });
    const r = await host.call('srv_read_text_file', { bytes: 100 });
    expect(r.isError, r.content).to.equal(false);
    expect(r.data).to.deep.equal({ content: r.content });
  });

  it('reads 150 KB through a server that repeats its text in structuredContent: text and data cut, the call succeeds', async () => {
    const r = await host.call('srv_read_text_file', { bytes: 150_000 });
    expect(r.isError, r.content).to.equal(false);
    expect(r).to.include({ truncated: true, dataTruncated: true });
    expect(r.content).to.match(
      /^HEAD\.+\n\n\[… \d+ bytes omitted of 150000: output capped at 65536 bytes, head and tail kept …\]\n\n\.+TAIL$/,
    );
    const data = r.data as { content: string };
    expect(data.content).to.match(/^HEAD\.+\n\n\[… \d+ bytes omitted of 150000: .*\]\n\n\.+TAIL$/);
    expect(Buffer.byteLength(JSON.stringify(data))).to.be.at.most(65_536);
  });
});

describe('MCP servers as plugins: failures and lifetime', function () {
  this.timeout(20_000);

  it('loads a server behind a URL; when it restarts, a new session carries on; while it is down, calls fail and the next one reconnects', async () => {
    let remote = await startHttpServer();
    const host = await hostWith([{ name: 'remote', mcp: { url: `http://127.0.0.1:${remote.port}/mcp` } }], {
      isolation: { quarantine: { failures: 10 } },
    });
    try {
      expect(host.plugins()[0]).to.include({ status: 'loaded', isolation: 'process' });
      expect(await host.call('remote_echo', { text: 'over http' })).to.include({
        isError: false,
        content: 'over http',
      });
      const first = await serverPid(host, 'remote_stats');

      // Restarted between two calls: the old session means nothing to the new process (404). That
      // request reached no tool, so the call goes again on a new session, unseen by the caller.
      await stopped(remote.child);
      remote = await startHttpServer(remote.port);
      const second = await serverPid(host, 'remote_stats');
      expect(second).to.equal(remote.child.pid).and.not.equal(first);

      // Down: the call fails, saying so; once it is back the next call connects again.
      await stopped(remote.child);
      const down = await host.call('remote_echo', { text: 'x' });
      expect(down).to.include({ isError: true, code: 'crashed' });
      expect(down.content).to.include('MCP server "remote" could not be reached');
      remote = await startHttpServer(remote.port);
      expect(await host.call('remote_echo', { text: 'back' })).to.include({ isError: false, content: 'back' });
      expect(await serverPid(host, 'remote_stats')).to.equal(remote.child.pid);
    } finally {
      await host.close();
      await stopped(remote.child);
    }
  });

  it('quarantines a crash-looping server, then starts it again after the cooldown', async () => {
    const { logger, lines } = capturingLogger('error'); // the quarantine is logged as an error: kept off the test output
    const host = await hostWith(
      [fixture('loop')],
      { isolation: { quarantine: { failures: 2, windowMs: 60_000, cooldownMs: 700 } } },
      logger,
    );
    try {
      expect(await host.call('loop_die', {})).to.include({ code: 'crashed' });
      expect(await host.call('loop_die', {})).to.include({ code: 'crashed' });
      expect(host.plugins()[0]!.status).to.equal('quarantined');
      expect(lines.map((l) => l.message)).to.satisfy((messages: string[]) =>
        messages.some((m) => m.startsWith('MCP server "loop" quarantined: 2 crashes')),
      );
      expect(await host.call('loop_echo', { text: 'x' })).to.include({ isError: true, code: 'quarantined' });
      await until(() => host.plugins()[0]!.status === 'loaded', { message: 'the quarantine to lift' });
      await until(async () => !(await host.call('loop_echo', { text: 'x' })).isError, {
        message: 'the server to answer again',
      });
    } finally {
      await host.close();
    }
  });

  it("keeps a server's stderr lines short: a 5 MB line is cut in the error that quotes it", async () => {
    // readline held a line whole however long, and the failure quoted the last ten in full.
    const script =
      "process.stderr.write('start\\n' + 'e'.repeat(5_000_000) + '\\nlast words\\n', () => process.exit(3))";
    const host = await hostWith([{ name: 'loud', mcp: { command: process.execPath, args: ['-e', script] } }]);
    try {
      const { error } = host.plugins()[0]!;
      expect(error!.code, error!.message).to.equal('RH_ERR_MCP_CONNECT');
      expect(error!.message).to.include('start').and.include('last words');
      expect(error!.message).to.match(/e{1000}… \[4,99\d,\d{3} more characters\]/);
      expect(error!.message.length).to.be.below(5_000);
    } finally {
      await host.close();
    }
  });
});
