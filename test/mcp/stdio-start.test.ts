// `start --mcp` answers the handshake before the MCP SDK has loaded (core/mcp/stdio-start.ts): a raw
// JSON-RPC writer gets, line for line, the answers the host's SDK server gives to the same lines,
// the edge cases included; a session that ends within its handshake never hands over to the SDK;
// an SDK client sees the same server, and the SDK's server, once it takes over, holds the handshake.
import { expect } from 'chai';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Host } from '../../core/host.ts';
import { createMcpServer } from '../../core/mcp/server.ts';
import { StdioTransport } from '../../core/mcp/stdio.ts';
import { BIN, FIXTURES, tempDir } from '../helpers.ts';
import { text } from './shared.ts';

const HANDOVER = "the SDK's server takes the session over";
const MISMATCH = 'needs reading again';
/** Ends each exchange: every answer before it is in once its own is. */
const END = JSON.stringify({ jsonrpc: '2.0', id: 'end', method: 'ping' });

const init = (id: number | string, protocolVersion: string, capabilities: object = {}) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion, capabilities, clientInfo: { name: 'raw', version: '1' } },
  });
const initialized = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });

/** Reads newline-delimited JSON from `stream` until the answer to `END`; every message read. */
function answersUntilEnd(stream: NodeJS.ReadableStream): Promise<unknown[]> {
  return new Promise((resolve) => {
    const answers: unknown[] = [];
    let buffered = '';
    const ondata = (chunk: Buffer | string) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const message = JSON.parse(line) as { id?: unknown };
        answers.push(message);
        if (message.id === 'end') {
          stream.off('data', ondata);
          resolve(answers);
        }
      }
    };
    stream.on('data', ondata);
  });
}

/** What the host's SDK server (stdio.ts's transport, no handshake in plain code) answers `lines` with. */
async function sdkAnswers(lines: string[]): Promise<unknown[]> {
  const input = new PassThrough();
  const output = new PassThrough();
  const transport = new StdioTransport({
    input,
    send: async (chunk) => void output.write(chunk),
    max: 10 * 1024 * 1024,
    onOversize: () => {},
  });
  const server = createMcpServer(new Promise<Host>(() => {}), { listChanged: true });
  await server.connect(transport);
  const answers = answersUntilEnd(output);
  input.write(`${[...lines, END].join('\n')}\n`);
  const got = await answers;
  await server.close();
  return got;
}

describe('rousseau-host start --mcp, the handshake before the SDK loads', function () {
  this.timeout(60_000);
  const tmp = tempDir('rh-mcp-handshake-');
  const gate = join(tmp.dir, 'gate');
  // Its one plugin loads only once the gate exists: until then only a message can bring the SDK in.
  // Inline: where the plugin runs is not what the handshake is about, and a worker thread in each of
  // the file's 15 hosts was ~0.17 s of CPU apiece.
  const config = tmp.write(
    'rousseau.config.json',
    JSON.stringify({
      builtins: false,
      plugins: [
        {
          module: join(FIXTURES, 'mcp', 'slow-load.ts'),
          options: { gate, tag: 'late' },
          isolation: 'inline',
          loadTimeoutMs: 60_000,
        },
      ],
      policy: { default: 'allow' },
      log: { audit: false },
    }),
  );
  after(() => {
    writeFileSync(gate, '');
    tmp.cleanup();
  });

  /** `start --mcp` on the config: `exchange` sends `lines` (then END) and has every answer until END's. */
  function startHost() {
    const child = spawn(process.execPath, [BIN, 'start', '--mcp', '--config', config, '--log-level', 'debug'], {
      cwd: tmp.dir,
    }) as ChildProcessWithoutNullStreams;
    const host = {
      stderr: '',
      exited: new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code))),
      exchange(lines: string[]) {
        const answers = answersUntilEnd(child.stdout);
        child.stdin.write(`${[...lines, END].join('\n')}\n`);
        return answers;
      },
      end: () => child.stdin.end(),
    };
    child.stderr.on('data', (d: Buffer) => (host.stderr += d.toString()));
    return host;
  }

  /** `start --mcp` fed `lines` (then END): its answers, its stderr (debug), its exit code once stdin ends. */
  async function hostAnswers(lines: string[]) {
    const host = startHost();
    const answers = await host.exchange(lines);
    host.end();
    const code = await host.exited;
    return { answers, stderr: host.stderr, code };
  }

  const cases: Array<{ name: string; lines: string[]; sdk: boolean }> = [
    {
      name: 'initialize, initialized, ping',
      lines: [init(0, '2025-06-18'), initialized, '{"jsonrpc":"2.0","id":1,"method":"ping"}'],
      sdk: false,
    },
    {
      name: 'an unsupported protocol version',
      lines: [init(0, '1999-01-01'), initialized],
      sdk: false,
    },
    {
      // Each is kept until the handover to be replayed: a second goes to the SDK, so they cannot pile up.
      name: 'a second initialize',
      lines: [init(0, '2025-06-18'), init(1, '2024-11-05', { roots: { listChanged: true }, elicitation: {} })],
      sdk: true,
    },
    {
      name: 'a second initialized',
      lines: [init(0, '2025-06-18'), initialized, initialized, '{"jsonrpc":"2.0","id":1,"method":"ping"}'],
      sdk: true,
    },
    {
      name: 'a request before initialize',
      lines: ['{"jsonrpc":"2.0","id":0,"method":"resources/list"}', init(1, '2025-06-18')],
      sdk: true,
    },
    { name: 'a batch as the first line', lines: [`[${init(0, '2025-06-18')}]`, init(1, '2025-06-18')], sdk: true },
    { name: 'garbage as the first line', lines: ['not json', init(1, '2025-06-18')], sdk: true },
    {
      name: 'an initialize whose params the SDK refuses',
      lines: [
        '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}',
        init(1, '2025-06-18'),
      ],
      sdk: true,
    },
    {
      name: 'CRLF line ends, the handshake and the request that needs the SDK',
      lines: [`${init(0, '2025-06-18')}\r`, `${initialized}\r`, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\r'],
      sdk: true,
    },
    {
      name: 'an initialize longer than the handshake reads (64 KiB), then a ping',
      lines: [
        init(0, '2025-06-18', { experimental: { pad: { text: 'x'.repeat(200 * 1024) } } }),
        '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      ],
      sdk: true,
    },
    {
      name: 'a request with the id of the initialize, and ids the SDK refuses',
      lines: [
        init(7, '2025-06-18'),
        '{"jsonrpc":"2.0","id":7,"method":"ping"}',
        '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
        '{"jsonrpc":"2.0","id":null,"method":"ping"}',
        '{"jsonrpc":"2.0","id":7,"method":"tools/list"}',
      ],
      sdk: true,
    },
  ];
  for (const { name, lines, sdk } of cases)
    it(`answers ${name} as the SDK server does${sdk ? '' : ', and never loads the SDK'}`, async () => {
      const host = await hostAnswers(lines);
      expect(host.answers, host.stderr).to.deep.equal(await sdkAnswers(lines));
      expect(host.code, host.stderr).to.equal(0);
      expect(host.stderr.includes(HANDOVER), host.stderr).to.equal(sdk);
      expect(host.stderr).to.not.include(MISMATCH);
    });

  it('answers a request under any id after the handshake, even one the client cancelled before the handover', async () => {
    // The handshake is replayed to the SDK under ids of the host's own: a client that names one of
    // them must neither cancel the replayed initialize (its answer would then never come, and the
    // next answer under that id would be dropped in its place) nor lose an answer of its own.
    const host = startHost();
    const guesses = [1, 2].map((n) => `rousseau-host/handshake-${n}`);
    const cancels = guesses.map((requestId) =>
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } }),
    );
    await host.exchange([init(0, '2025-06-18'), ...cancels]);
    const pings = guesses.map((id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }));
    expect(await host.exchange(pings), host.stderr).to.deep.equal([
      ...guesses.map((id) => ({ result: {}, jsonrpc: '2.0', id })),
      { result: {}, jsonrpc: '2.0', id: 'end' },
    ]);
    host.end();
    expect(await host.exited, host.stderr).to.equal(0);
    expect(host.stderr).to.include(HANDOVER);
    expect(host.stderr).to.not.include(MISMATCH);
  });

  it('answers as the SDK server does when lines are split across reads at the handover, a character too', async () => {
    const lines = [init(0, '2025-06-18'), initialized, '{"jsonrpc":"2.0","id":1,"method":"resources/list"}'].map((l) =>
      l.replace('"raw"', '"rawé"'),
    );
    const bytes = Buffer.from(`${[...lines, END].join('\n')}\n`);
    const cuts = [bytes.indexOf(Buffer.from('é')) + 1, bytes.indexOf('resources/list') + 2, bytes.length];
    const child = spawn(process.execPath, [BIN, 'start', '--mcp', '--config', config], { cwd: tmp.dir });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const answers = answersUntilEnd(child.stdout);
    let from = 0;
    for (const cut of cuts) {
      child.stdin.write(bytes.subarray(from, cut));
      from = cut;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // By id: the SDK's server answers a request it has no method for before the initialize read
    // with it (its initialize handler is async); the host has answered that initialize already.
    const byId = (all: unknown[]) => all.map((a) => JSON.stringify(a)).sort();
    expect(byId(await answers)).to.deep.equal(byId(await sdkAnswers(lines)));
    child.stdin.end();
    expect(await exited).to.equal(0);
  });

  it('ends with the host’s error when its config fails during the handshake', async () => {
    const bad = tmp.write('bad/rousseau.config.json', JSON.stringify({ builtins: false, plugns: [] }));
    const child = spawn(process.execPath, [BIN, 'start', '--mcp', '--config', bad], {
      cwd: tmp.dir,
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.write(`${init(0, '2025-06-18')}\n`);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, stderr).to.equal(1);
    expect(stderr).to.match(/Invalid config .*\n\s+plugns: unknown key/);
  });

  it('serves an SDK client as before: the same server; once the plugin is in, the SDK server lists and calls', async () => {
    const [near, far] = InMemoryTransport.createLinkedPair();
    await createMcpServer(new Promise<Host>(() => {}), { listChanged: true }).connect(far);
    const reference = new Client({ name: 'test-client', version: '1.0.0' });
    await reference.connect(near);

    let stderr = '';
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'start', '--mcp', '--config', config, '--log-level', 'debug'],
      cwd: tmp.dir,
      stderr: 'pipe',
    });
    transport.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client(
      { name: 'test-client', version: '1.0.0' },
      { capabilities: { roots: { listChanged: true } } },
    );
    try {
      await client.connect(transport);
      expect(client.getServerVersion()).to.deep.equal(reference.getServerVersion());
      expect(client.getServerCapabilities()).to.deep.equal(reference.getServerCapabilities());
      expect(client.getInstructions()).to.equal(reference.getInstructions());
      await client.ping();
      expect(stderr).to.not.include(HANDOVER);

      writeFileSync(gate, '');
      expect((await client.listTools()).tools.map((t) => t.name)).to.deep.equal(['late_echo']);
      expect(text(await client.callTool({ name: 'late_echo', arguments: { text: 'hi' } }))).to.equal('late:hi');
      expect(stderr).to.include(HANDOVER);
      expect(stderr).to.not.include(MISMATCH);
    } finally {
      await client.close();
      await reference.close();
    }
  });
});
