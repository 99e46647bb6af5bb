// The plugin author's path as someone outside this repo walks it before anything is published:
// `npm run pack` makes the two tarballs; in a temp dir outside the clone, the scaffolder runs from
// its tarball (offline: it finds the host is not on the registry, and points the new plugin at the
// host tarball packed with it), `npm install` and the plugin's own `npm test` pass, a separate
// project installs the host, `rousseau-host add`s the plugin, and `tools`, `call` and `start --mcp`
// work there (the MCP SDK is bundled in the host's dist/: the project installs no copy of it).
// Every install comes from the npm cache first (--prefer-offline); nothing from this clone's
// node_modules is linked or put on the PATH.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ROOT, tempDir } from '../helpers.ts';
import { run } from '../scaffold/helpers.ts';

/** PATH without this clone's node_modules/.bin (`npm test` puts it first). */
const PATH = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((dir) => !dir.startsWith(ROOT))
  .join(delimiter);
const PREFER_OFFLINE = { PATH, npm_config_prefer_offline: 'true' };

describe('the author path outside the repo, from the packed tarballs', () => {
  let tmp: ReturnType<typeof tempDir>;
  before(() => (tmp = tempDir('rh-outside-')));
  after(function () {
    this.timeout(120_000); // three projects' node_modules to delete, on a loaded machine that takes more than 20 s
    tmp.cleanup();
  });

  it('packs, scaffolds, installs, passes its own tests, and is added to and called from another project', async function () {
    this.timeout(900_000); // a dozen real npm and node processes in a row on a shared 2-core machine
    expect(tmp.dir.startsWith(ROOT)).to.equal(false);
    const step = async (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = PREFER_OFFLINE) => {
      const result = await run(command, args, { cwd, env, timeoutMs: 300_000 });
      expect(result.code, `${command} ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).to.equal(0);
      return result;
    };

    const packs = join(tmp.dir, 'packs');
    const packed = await step('npm', ['run', '--silent', 'pack', '--', '--out', packs], ROOT);
    const [hostTgz, createTgz] = packed.stdout.trim().split('\n') as [string, string];
    expect(hostTgz).to.equal(join(packs, 'rousseau-host-0.1.0.tgz'));
    expect(createTgz).to.equal(join(packs, 'create-rousseau-tool-0.1.0.tgz'));
    // The scaffolder in the repo is left as it was: the host's path goes into the tarball only.
    expect(existsSync(join(ROOT, 'scripts', 'create-rousseau-tool', 'host.json'))).to.equal(false);

    // Offline, `npm view rousseau-host` cannot answer: the scaffolder must fall back on the tarball.
    const created = await step(
      'npx',
      ['--yes', `--package=${createTgz}`, 'create-rousseau-tool', 'my-tool', '--yes'],
      tmp.dir,
      {
        PATH,
        npm_config_offline: 'true',
      },
    );
    expect(created.stdout).to.include(
      `rousseau-host for its tests: the tarball packed with this scaffolder, ${hostTgz} (not on the registry)`,
    );
    const plugin = join(tmp.dir, 'my-tool');
    const manifest = JSON.parse(readFileSync(join(plugin, 'package.json'), 'utf8'));
    expect(manifest.devDependencies['rousseau-host']).to.equal(`file:${hostTgz}`);
    expect(manifest).to.deep.include({ rousseau: { plugin: './src/index.ts' } });

    // The plugin's install and tests, and the agent project's install of the host, touch separate
    // folders: they run side by side. `add` links the plugin folder (npm then installs into it too),
    // so it waits for both.
    const project = join(tmp.dir, 'project');
    tmp.write('project/package.json', '{ "name": "my-agent", "private": true }\n');
    const [tested] = await Promise.all([
      step('npm', ['install', '--no-audit', '--no-fund'], plugin).then(() => step('npm', ['test'], plugin)),
      step('npm', ['install', '--no-audit', '--no-fund', hostTgz], project),
    ]);
    expect(tested.stdout).to.include('ok  my-tool 0.1.0: 1 tool (count_words)'); // the pretest contract check
    expect(tested.stdout)
      .to.match(/\b\d+ passing\b/)
      .and.not.match(/failing|pending/);
    // The repo's scripts stay in the repo: npm would flag `prepare` as an install script at every install.
    const installed = JSON.parse(readFileSync(join(project, 'node_modules', 'rousseau-host', 'package.json'), 'utf8'));
    expect(installed).to.not.have.any.keys('scripts', 'workspaces');
    const added = await step('npx', ['rousseau-host', 'add', '../my-tool'], project);
    expect(added.stdout).to.include("Added 'rousseau-plugin-my-tool' to the plugins of");
    // The host is the project's own dependency: the hint runs it the way this step did.
    expect(added.stdout).to.include('Next: npx rousseau-host tools\n');

    const tools = await step('npx', ['rousseau-host', 'tools', '--json'], project);
    const mine = (
      JSON.parse(tools.stdout).plugins as { name: string; status: string; tools: { name: string }[] }[]
    ).find((p) => p.name === 'my-tool');
    expect(mine?.status).to.equal('loaded');
    expect(mine?.tools.map((t) => t.name)).to.deep.equal(['count_words']);
    const called = await step(
      'npx',
      ['rousseau-host', 'call', 'count_words', '{"text":"To be, or not to be"}', '--json', '--yes'],
      project,
    );
    expect(JSON.parse(called.stdout)).to.include({
      tool: 'count_words',
      isError: false,
      content: '6 words, 4 distinct\nbe: 2\nto: 2\nnot: 1\nor: 1',
    });

    // Over MCP, from the installed bin: the client is this repo's SDK, the server the tarball's bundle.
    expect(existsSync(join(project, 'node_modules', '@modelcontextprotocol'))).to.equal(false);
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(project, 'node_modules', 'rousseau-host', 'bin', 'rousseau-host.js'), 'start', '--mcp'],
        cwd: project,
        env: { PATH },
        stderr: 'ignore',
      }),
    );
    try {
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name)).to.include('count_words');
      const overMcp = await client.callTool({ name: 'count_words', arguments: { text: 'To be, or not to be' } });
      expect(overMcp.isError ?? false).to.equal(false);
      expect(overMcp.content).to.deep.equal([
        { type: 'text', text: '6 words, 4 distinct\nbe: 2\nto: 2\nnot: 1\nor: 1' },
      ]);
    } finally {
      await client.close();
    }
  });
});
