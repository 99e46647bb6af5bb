import { expect } from 'chai';
import { join } from 'node:path';
import { FIXTURES, runCli } from '../helpers.ts';
import { fixture, projectPerTest } from './shared.ts';

describe('rousseau-host tools', function () {
  this.timeout(60_000); // each test spawns the real CLI a few times
  const t = projectPerTest();
  const config = t.config;

  it('tools --json: one good plugin loaded, four broken ones failed, each with its own reason', async () => {
    config({
      builtins: false,
      plugins: [
        fixture('echo.ts'),
        fixture('broken-import.ts'),
        fixture('broken-setup.ts'),
        fixture('broken-contract.ts'),
        './missing-plugin',
      ],
    });
    const r = await runCli(['tools', '--json'], { cwd: t.dir });
    expect(r.code).to.equal(0);
    const { plugins } = JSON.parse(r.stdout) as {
      plugins: {
        name: string;
        status: string;
        source: string;
        isolation: string;
        error?: { code: string; message: string };
        tools: { name: string; description: string; inputSchema: unknown }[];
      }[];
    };
    expect(plugins.map((p) => p.status)).to.deep.equal(['loaded', 'failed', 'failed', 'failed', 'failed']);
    expect(plugins[0]!.tools.map((x) => x.name)).to.deep.equal(['echo']);
    expect(plugins[0]!.tools[0]!.inputSchema).to.have.property('type', 'object');
    expect(plugins.slice(1).map((p) => p.error!.code)).to.deep.equal([
      'RH_ERR_PLUGIN_IMPORT',
      'RH_ERR_PLUGIN_SETUP',
      'RH_ERR_PLUGIN_CONTRACT',
      'RH_ERR_PLUGIN_NOT_FOUND',
    ]);
    expect(plugins[1]!.error!.message).to.contain('boom at import');
    expect(plugins[2]!.error!.message).to.contain('cannot reach the database');
    expect(plugins[4]!.source).to.equal('./missing-plugin');
    const strict = await runCli(['tools', '--strict'], { cwd: t.dir });
    expect(strict.code).to.equal(1);
    expect(strict.stdout).to.contain('echo').and.contain('failed');
  });

  it('tools: a config error exits 1 naming the file and key, as JSON with --json', async () => {
    const file = config({ plugins: [{ module: './x', timeoutMs: -1 }] });
    const r = await runCli(['tools', '--json'], { cwd: t.dir });
    expect(r.code).to.equal(1);
    const { error } = JSON.parse(r.stdout) as { error: { code: string; message: string } };
    expect(error.code).to.equal('RH_ERR_CONFIG_INVALID');
    expect(error.message).to.contain(file).and.contain('plugins[0].timeoutMs');
    expect(r.stderr).to.contain('plugins[0].timeoutMs');
  });

  it('tools: an MCP server with many warnings shows three and how many more; --json keeps every one', async () => {
    // Six properties without a description: six warnings the server's user cannot fix.
    const properties = Object.fromEntries(['a', 'b', 'c', 'd', 'e', 'f'].map((k) => [k, { type: 'string' }]));
    const schema = JSON.stringify({ type: 'object', properties });
    const server = { command: process.execPath, args: [join(FIXTURES, 'mcp', 'schema-server.mjs'), schema] };
    config({ builtins: false, plugins: [{ name: 'pub', mcp: server }] });
    const r = await runCli(['tools'], { cwd: t.dir });
    expect(r.code, r.stderr).to.equal(0);
    const warnings = r.stdout.split('\n').filter((line) => line.startsWith('  warning'));
    expect(warnings).to.have.length(3);
    expect(warnings[0]).to.include('tool "pub_echo"').and.include('property "a" has no description');
    expect(r.stdout).to.include('\n  … and 3 more warnings (`tools --json` lists every one)');
    const json = await runCli(['tools', '--json'], { cwd: t.dir });
    expect(JSON.parse(json.stdout).plugins[0].warnings).to.have.length(6);
  });

  it('--config and --cwd pick the config', async () => {
    t.write('elsewhere/my.json', JSON.stringify({ builtins: false, plugins: [fixture('echo.ts')] }));
    const r = await runCli(['tools', '--json', '--config', 'elsewhere/my.json'], { cwd: t.dir });
    expect(JSON.parse(r.stdout).plugins.map((p: { name: string }) => p.name)).to.deep.equal(['echo']);
    const r2 = await runCli(['--cwd', join(t.dir, 'elsewhere'), 'tools', '--json', '--config', 'my.json']);
    expect(JSON.parse(r2.stdout).plugins.map((p: { name: string }) => p.name)).to.deep.equal(['echo']);
  });
});
