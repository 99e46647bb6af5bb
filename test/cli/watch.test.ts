// `start --watch --mcp`: the built CLI as a child process, an MCP client on its stdio, and a
// plugin edited on disk under it.
import { writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describeReload } from '../../core/cli/reloads.ts';
import type { ToolInfo } from '../../core/types.ts';
import { helperSource, pluginSource } from '../fixtures/reload/live-plugin.ts';
import { BIN, tempDir, until } from '../helpers.ts';
import { openTerminal } from './terminal.ts';

/**
 * The live plugin (tool `word`, answering "one") and a config that serves it: returns the config's
 * path. Inline: these tests are about the watch and what it tells clients; test/reload.test.ts
 * reloads in each isolation. In a worker, every edit started a thread that loaded Babel for the
 * new source (jiti's cache misses on an edit): ~0.5 s of CPU a save.
 */
function writeProject(tmp: ReturnType<typeof tempDir>): string {
  tmp.write('live/index.ts', pluginSource('word'));
  tmp.write('live/helper.ts', helperSource('one'));
  return tmp.write(
    'rousseau.config.json',
    JSON.stringify({
      builtins: false,
      plugins: [{ module: './live/index.ts', isolation: 'inline' }],
      policy: { default: 'allow' },
      log: { audit: false },
    }),
  );
}

const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

describe('rousseau-host start --watch --mcp', function () {
  this.timeout(60_000);
  const tmp = tempDir('rh-watch-');
  const entry = join(tmp.dir, 'live', 'index.ts');
  let client: Client;
  let stderr = '';
  let listChanges = 0;

  before(async () => {
    const config = writeProject(tmp);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'start', '--watch', '--mcp', '--config', config],
      cwd: tmp.dir,
      stderr: 'pipe',
    });
    transport.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    client = new Client({ name: 'watch-test', version: '1.0.0' });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void listChanges++);
    await client.connect(transport);
    // The watch starts once the plugin has loaded: seconds on a busy machine.
    await until(() => stderr.includes('watching'), {
      timeoutMs: 20_000,
      message: () => `the watch to start; stderr: ${stderr}`,
    });
  });
  after(async () => {
    await client.close();
    tmp.cleanup();
  });

  const names = async () => (await client.listTools()).tools.map((t) => t.name);

  it('serves the edited plugin after a save, and tells the client the list changed', async () => {
    expect(await names()).to.deep.equal(['word']);
    expect(text(await client.callTool({ name: 'word', arguments: {} }))).to.equal('one');
    // The plugin's first registration was announced too, as it loaded: count from here.
    const told = listChanges;
    tmp.write('live/helper.ts', helperSource('two'));
    writeFileSync(entry, pluginSource('phrase'));
    await until(() => listChanges > told, { timeoutMs: 20_000, message: () => `list_changed; stderr: ${stderr}` });
    expect(await names()).to.deep.equal(['phrase']);
    expect(text(await client.callTool({ name: 'phrase', arguments: {} }))).to.equal('two');
    expect(stderr).to.include('reloaded live: +phrase -word');
  });

  it('keeps serving the last good version when an edit does not parse', async () => {
    const failures = stderr.split('the previous version still serves').length;
    writeFileSync(entry, `${pluginSource('broken')}\nexport const x = ;\n`);
    await until(() => stderr.split('the previous version still serves').length > failures, {
      timeoutMs: 20_000,
      message: () => `the failed reload on stderr; stderr: ${stderr}`,
    });
    expect(await names()).to.deep.equal(['phrase']);
    expect(text(await client.callTool({ name: 'phrase', arguments: {} }))).to.equal('two');
  });

  it('keeps serving the last good version when an edit breaks the contract, and prints the check', async () => {
    const failures = stderr.split('breaks the tool contract').length;
    writeFileSync(entry, pluginSource('Bad Name'));
    await until(() => stderr.split('breaks the tool contract').length > failures, {
      timeoutMs: 20_000,
      message: () => `the contract failure on stderr; stderr: ${stderr}`,
    });
    expect(stderr).to.include('Bad Name');
    expect(await names()).to.deep.equal(['phrase']);
    expect(text(await client.callTool({ name: 'phrase', arguments: {} }))).to.equal('two');
  });
});

describe('rousseau-host start --watch --mcp-http', function () {
  this.timeout(60_000);

  it('serves the edited plugin at the next tools/list', async () => {
    const tmp = tempDir('rh-watch-');
    const config = writeProject(tmp);
    const child = spawn(process.execPath, [BIN, 'start', '--watch', '--mcp-http', '0', '--config', config], {
      cwd: tmp.dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: 'watch-test', version: '1.0.0' });
    try {
      const url = await until(() => /at (http:\S+)/.exec(stderr)?.[1], { timeoutMs: 20_000, message: () => stderr });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      expect((await client.listTools()).tools.map((t) => t.name)).to.deep.equal(['word']);
      tmp.write('live/helper.ts', helperSource('two'));
      writeFileSync(join(tmp.dir, 'live', 'index.ts'), pluginSource('phrase'));
      await until(async () => (await client.listTools()).tools.some((t) => t.name === 'phrase'), {
        timeoutMs: 20_000,
        message: () => `the new tool; stderr: ${stderr}`,
      });
      expect(text(await client.callTool({ name: 'phrase', arguments: {} }))).to.equal('two');
    } finally {
      await client.close();
      child.kill('SIGTERM');
      await new Promise((resolve) => child.on('close', resolve));
      tmp.cleanup();
    }
  });
});

describe('rousseau-host start --watch on a terminal (REPL)', function () {
  this.timeout(60_000);

  it('reloads by hand with /reload, on its own on a save, and the next turn uses the new tools', async () => {
    const tmp = tempDir('rh-watch-');
    writeProject(tmp);
    const script = tmp.write(
      'repl.json',
      JSON.stringify({ turns: [{ toolCalls: [{ name: 'phrase', input: {} }] }, { text: 'Done.' }] }),
    );
    const terminal = openTerminal(['start', '--watch', '--replay', script], {
      cwd: tmp.dir,
      env: { ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', NO_COLOR: '1' },
    });
    try {
      await terminal.waitFor(/you> /);
      expect(terminal.screen()).to.match(/watching .*live for \.\/live\/index\.ts/);
      terminal.type('/reload');
      terminal.press('Enter');
      await terminal.waitFor(/reloaded live: same tools/);
      terminal.type('/reload nope');
      terminal.press('Enter');
      await terminal.waitFor(/no plugin named "nope"/);
      tmp.write('live/helper.ts', helperSource('two'));
      writeFileSync(join(tmp.dir, 'live', 'index.ts'), pluginSource('phrase'));
      await terminal.waitFor(/reloaded live: \+phrase -word/);
      terminal.type('go');
      terminal.press('Enter');
      await terminal.waitFor(/✓ phrase .*two/);
      // A reload on a save comes while the prompt is open: its line goes above the prompt, which is drawn again.
      expect(terminal.screen()).to.match(/^reloaded live: \+phrase -word\n\nyou> go\n/m);
      await terminal.waitFor(/Done\./);
      terminal.press('C-d');
      expect(await terminal.exited()).to.equal(0);
    } finally {
      terminal.close();
      tmp.cleanup();
    }
  });
});

describe('describeReload (the lines of --watch and /reload)', () => {
  const tool = (name: string, description = 'd'): ToolInfo => ({ name, description, inputSchema: {}, plugin: 'p' });
  const loaded = { name: 'p', source: './p.ts', status: 'loaded' as const, isolation: 'worker' as const, tools: [] };

  it('names the tools added, changed and removed', () => {
    expect(
      describeReload([loaded], [tool('a'), tool('b'), tool('c')], [tool('a'), tool('b', 'new'), tool('d')]),
    ).to.deep.equal(['reloaded p: +d ~b -c']);
    expect(describeReload([loaded], [tool('a')], [tool('a')])).to.deep.equal(['reloaded p: same tools']);
  });

  it('says when the previous version still serves', () => {
    const failed = { ...loaded, reloadError: { code: 'RH_ERR_PLUGIN_IMPORT' as const, message: 'x' } };
    expect(describeReload([failed], [tool('a')], [tool('a')])).to.deep.equal([
      'p: the reload failed; the previous version still serves',
    ]);
  });
});
