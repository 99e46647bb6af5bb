// A hostile MCP server as a plugin (test/fixtures/mcp/hostile-server.mjs, written with the SDK,
// spawned over stdio by a real host): what it lists, what it reports while a call runs, and what
// it asks the host for.
import { expect } from 'chai';
import { join } from 'node:path';
import { createHost, type Host } from '../../core/host.ts';
import type { HostConfig } from '../../core/config-schema.ts';
import type { Progress } from '../../core/types.ts';
import { FIXTURES } from '../helpers.ts';

const HOSTILE = join(FIXTURES, 'mcp', 'hostile-server.mjs');

function hostile(mode: string): Promise<Host> {
  return createHost({
    cwd: FIXTURES,
    audit: false,
    logLevel: 'error',
    config: {
      builtins: false,
      policy: { default: 'allow' },
      // Far past what the refusals need: a busy machine must not turn them into load timeouts.
      plugins: [{ name: 'evil', mcp: { command: process.execPath, args: [HOSTILE, mode] }, loadTimeoutMs: 20_000 }],
    } as HostConfig,
  });
}

describe('MCP servers as plugins: a hostile server', function () {
  this.timeout(90_000);

  /** The load error of the server in `mode`, and the tools the host then has. */
  async function failedLoad(mode: string): Promise<{ code?: string; message: string; tools: unknown[] }> {
    const host = await hostile(mode);
    try {
      const { error } = host.plugins()[0]!;
      return { code: error?.code, message: error?.message ?? '(loaded)', tools: host.tools() as unknown[] };
    } finally {
      await host.close();
    }
  }

  // Each page was added to the list as it came, for as long as the load lasted: pages of 10 MiB
  // from a server on the same machine filled the host's memory well within a load timeout.
  it('refuses a tool list that goes on past 1,000 tools, naming the bound', async () => {
    const { code, message, tools } = await failedLoad('endless-list');
    expect(code, message).to.equal('RH_ERR_MCP_CONNECT');
    expect(message).to.include('evil').and.include('more than 1,000 tools');
    expect(tools).to.deep.equal([]);
  });

  it('refuses a tool list of empty pages that goes on past 1,000 pages, as it would 1,000 tools', async () => {
    const { code, message } = await failedLoad('empty-pages');
    expect(code, message).to.equal('RH_ERR_MCP_CONNECT');
    expect(message).to.include('more than 1,000 tools');
  });

  it('refuses a tool list past 16 Mi characters, though each page is under the 10 MiB a message may hold', async () => {
    const { code, message } = await failedLoad('big-list');
    expect(code, message).to.equal('RH_ERR_MCP_CONNECT');
    expect(message).to.include('16,777,216 characters');
  });

  // A name listed twice became evil_delete_repo and evil_delete_repo_2, both calling the server's
  // delete_repo: a deny rule on the first left the second free to call the same tool.
  it('refuses a server that lists one tool name twice, as a plugin with two tools of one name', async () => {
    const { code, message, tools } = await failedLoad('twice');
    expect(code, message).to.equal('RH_ERR_PLUGIN_CONTRACT');
    expect(message).to.include('duplicate tool name "evil_delete_repo" (also /tools/0)');
    expect(tools).to.deep.equal([]);
  });

  describe('while a call runs', () => {
    let host: Host;
    before(async () => {
      host = await hostile('calls');
      expect(host.plugins()[0]!.error).to.equal(undefined);
    });
    after(() => host.close());

    // A worker plugin's progress text was cut to 1,024 characters; a server's went on whole, to the
    // terminal and to every MCP client of the host, as often as the server sent it.
    it("cuts a progress message to 1,024 characters, as a worker plugin's", async () => {
      const seen: Progress[] = [];
      const r = await host.call('evil_shout', {}, { onProgress: (p) => seen.push(p) });
      expect(r).to.include({ isError: false, content: 'shouted' });
      expect(seen).to.have.length(1);
      expect(seen[0]).to.include({ done: 1, total: 2 });
      expect(seen[0]!.message).to.have.length(1024);
      expect(seen[0]!.message!.startsWith('\u001b]0;owned\u0007ppp')).to.equal(true);
    });

    it('reads no list_changed or log notification: 10,000 of each leave the tools as listed and the call answering', async () => {
      const before = host.tools().map((t) => t.name);
      const r = await host.call('evil_flood', {});
      expect(r).to.include({ isError: false, content: 'flooded' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(host.tools().map((t) => t.name))
        .to.deep.equal(before)
        .and.not.include('evil_late');
      expect(await host.call('evil_shout', {})).to.include({ isError: false, content: 'shouted' });
    });

    it('reads a 9 MiB answer over stdio and caps it', async () => {
      const r = await host.call('evil_big', {});
      expect(r.isError, r.content.slice(0, 200)).to.equal(false);
      expect(r.content.startsWith('bbbb')).to.equal(true);
      expect(r.content.length).to.be.below(70_000);
    });

    it('answers sampling, elicitation and roots requests it never offered with "method not found"', async () => {
      const r = await host.call('evil_ask', {});
      expect(r.isError, r.content).to.equal(false);
      const answers = JSON.parse(r.content) as { method: string; answer?: unknown; error?: string }[];
      expect(answers.map((a) => a.method)).to.deep.equal([
        'sampling/createMessage',
        'elicitation/create',
        'roots/list',
      ]);
      for (const a of answers) {
        expect(a.answer, a.method).to.equal(undefined);
        expect(a.error, a.method).to.match(/Method not found/);
      }
    });
  });
});
