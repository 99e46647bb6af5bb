import { expect } from 'chai';
import { truncateSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseJsonFlag } from '../core/cli/command.ts';
import { loadConfig } from '../core/config.ts';
import { HostError } from '../core/errors.ts';
import { createHost, type Host } from '../core/index.ts';
import { jsonTextTooLong, MAX_JSON_TEXT_CHARS, readJsonFile, readTextWithin } from '../core/json-text.ts';
import { quietHost, tempDir } from './helpers.ts';

// JSON.parse cannot be stopped once it runs (6.9 MB of small numbers took 0.6 s), so JSON text
// from outside is measured first: one bound, MAX_JSON_TEXT_CHARS, named in each refusal.
const OVER = MAX_JSON_TEXT_CHARS + 1;
const LIMIT = /over the host's limit of 10,485,760 parsed at once/;

describe('json-text: the bound on JSON text from outside, asked before parsing', () => {
  let temp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    temp = tempDir('rh-json-text-');
  });
  afterEach(() => temp.cleanup());

  it('names the length and the bound, and lets text within it through', async () => {
    expect(jsonTextTooLong(MAX_JSON_TEXT_CHARS)).to.equal(undefined);
    expect(jsonTextTooLong(OVER)).to.equal(
      "10,485,761 characters of JSON, over the host's limit of 10,485,760 parsed at once",
    );
    expect(await readTextWithin(Readable.from([Buffer.from('{"a":'), Buffer.from('1}')]), 'it')).to.equal('{"a":1}');
    let thrown: unknown;
    await readTextWithin(Readable.from([Buffer.alloc(6, 32), Buffer.alloc(6, 32)]), 'the answer', 10).catch((e) => {
      thrown = e;
    });
    expect(String(thrown)).to.match(/the answer passed the host's limit of 10 characters of JSON parsed at once/);
  });

  it('refuses a JSON file over the bound by its size, before reading it (a file of NULs would not parse)', () => {
    const file = temp.write('package.json', '');
    truncateSync(file, OVER);
    expect(() => readJsonFile(file)).to.throw(new RegExp(`${file} holds 10,485,761 characters of JSON, over`));
    expect(readJsonFile(temp.write('small.json', '{"name":"x"}'))).to.deep.equal({ name: 'x' });
  });

  it('refuses a config file over the bound, RH_ERR_CONFIG_LOAD naming the file and the bound', async () => {
    const file = temp.write('rousseau.config.json', `{${' '.repeat(OVER)}}`);
    const error = await loadConfig({ cwd: temp.dir }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(HostError);
    expect((error as HostError).code).to.equal('RH_ERR_CONFIG_LOAD');
    expect((error as HostError).message)
      .to.include(file)
      .and.match(LIMIT);
  });

  it('refuses --options over the bound as a usage error', () => {
    expect(() => parseJsonFlag('--options', `"${'x'.repeat(OVER)}"`)).to.throw(/^--options is 10,485,763 characters/);
    expect(parseJsonFlag('--options', '{"a":1}')).to.deep.equal({ a: 1 });
    expect(() => parseJsonFlag('--options', '{')).to.throw(/^--options is not JSON/);
  });
});

describe('json-text: a call input given as text', () => {
  let temp: ReturnType<typeof tempDir>;
  const hosts: Host[] = [];
  const echoHost = async (limits?: { maxInputChars: number }) => {
    const file = temp.write(
      'echo.mjs',
      `export default { name: 'echo', version: '1.0.0', tools: [{ name: 'len', description: 'Length.', inputSchema: { type: 'object', properties: { s: { type: 'string', description: 'S.' } } }, execute: (i) => String(i.s.length) }] };`,
    );
    const host = await quietHost(temp.dir, {
      plugins: [{ module: file, isolation: 'inline' }],
      ...(limits ? { limits } : {}),
    });
    hosts.push(host);
    return host;
  };
  before(() => {
    temp = tempDir('rh-json-input-');
  });
  after(async () => {
    for (const host of hosts) await host.close();
    temp.cleanup();
  });
  const text = (chars: number) => JSON.stringify({ s: 'x'.repeat(chars - 8) });

  it('refuses text over 10 MiB as invalid_input before parsing it, naming the bound and the setting; host.decide alike', async () => {
    const host = await echoHost();
    const over = await host.call('len', text(OVER));
    expect(over.code).to.equal('invalid_input');
    expect(over.content).to.match(/^Input for tool "len" is too large to check: it is 10,485,761 characters of JSON/);
    expect(over.content).to.match(LIMIT).and.include('limits.maxInputChars');
    expect(host.decide('len', text(OVER)).ok).to.equal(false);
    expect((await host.call('len', text(MAX_JSON_TEXT_CHARS))).content).to.equal(String(MAX_JSON_TEXT_CHARS - 8));
  });

  it('takes limits.maxInputChars from the config, lower or higher', async () => {
    const low = await echoHost({ maxInputChars: 2048 });
    expect((await low.call('len', text(2049))).content).to.match(
      /2,049 characters of JSON, over the host's limit of 2,048/,
    );
    expect((await low.call('len', text(2048))).content).to.equal('2040');
    // An object is not text: the bound is on parsing, and the checks bound the rest.
    expect((await low.call('len', { s: 'x'.repeat(5000) })).content).to.equal('5000');
    const high = await echoHost({ maxInputChars: 2 * MAX_JSON_TEXT_CHARS });
    expect((await high.call('len', text(OVER))).content).to.equal(String(OVER - 8));
  });
});

describe('json-text: an MCP server plugin over HTTP', () => {
  let server: Server;
  let port: number;
  before(async () => {
    // Answers every request with one JSON body past the bound: the handshake's answer included.
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"jsonrpc":"2.0","id":0,"result":{"pad":"${'x'.repeat(OVER)}"}}`);
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((done) => server.close(() => done())));

  it('fails the load with an error naming the bound, the answer never parsed whole', async () => {
    const host = await createHost({
      cwd: join(import.meta.dirname, '..'),
      audit: false,
      logLevel: 'silent',
      config: { builtins: false, plugins: [{ name: 'big', mcp: { url: `http://127.0.0.1:${port}/mcp` } }] },
    });
    try {
      const [plugin] = host.plugins();
      expect(plugin!.status).to.equal('failed');
      expect(JSON.stringify(plugin!.error)).to.match(
        /passed 10,485,760 bytes, the host's limit on JSON text parsed at once/,
      );
    } finally {
      await host.close();
    }
  });
});
