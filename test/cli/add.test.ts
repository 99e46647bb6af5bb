// `rousseau-host add` and `remove` refusing what npm would misread, before npm runs. The walks that
// run npm for real (install from a folder or a tarball, edit the config, load the plugin) are in
// test/e2e/add.e2e.ts (`npm run test:e2e`).
import { expect } from 'chai';
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { BIN, tempDir } from '../helpers.ts';
import { run } from '../scaffold/helpers.ts';

describe('rousseau-host add / remove', () => {
  let tmp: ReturnType<typeof tempDir>;
  let project: string;

  beforeEach(() => {
    tmp = tempDir('rh-add-');
    tmp.write('project/package.json', '{ "name": "project", "private": true }\n');
    project = join(tmp.dir, 'project');
  });
  afterEach(() => tmp.cleanup());

  /** An environment whose `npm` only leaves a mark that it ran (and fails), to show a command needs none. */
  function withoutNpm(): NodeJS.ProcessEnv {
    const npm = tmp.write('bin/npm', `#!/bin/sh\ntouch '${join(tmp.dir, 'npm-ran')}'\nexit 1\n`);
    chmodSync(npm, 0o755);
    return { PATH: `${dirname(npm)}${delimiter}${process.env.PATH}` };
  }

  it('refuses a SPEC or NAME that npm would read as an option, before npm runs', async () => {
    for (const args of [
      ['add', '--', '--version'],
      ['remove', '--', '--global'],
    ]) {
      const refused = await run(process.execPath, [BIN, ...args], {
        cwd: project,
        env: { npm_config_offline: 'true' },
      });
      expect(refused.code, refused.stderr).to.equal(2);
      expect(refused.stderr).to.include(`"${args[2]}" starts with "-": npm would take it for an option`);
    }
  });

  it('add FOLDER says the plugin does not load when a plugin already there holds its tool name', async () => {
    const plugin = (name: string) =>
      `export default { name: '${name}', version: '0.1.0', tools: [{ name: 'greet', description: 'Greets.',
        inputSchema: { type: 'object', properties: {}, additionalProperties: false }, execute: () => 'hi' }] };`;
    tmp.write('project/first.mjs', plugin('first'));
    tmp.write(
      'my-tool/package.json',
      JSON.stringify({ name: 'rousseau-plugin-my-tool', version: '0.1.0', rousseau: { plugin: './index.mjs' } }),
    );
    tmp.write('my-tool/index.mjs', plugin('my-tool'));
    tmp.write('project/rousseau.config.json', JSON.stringify({ builtins: false, plugins: ['./first.mjs'] }));
    // A folder installs offline (npm links it): no registry is asked.
    const added = await run(process.execPath, [BIN, 'add', '../my-tool'], {
      cwd: project,
      env: { npm_config_offline: 'true' },
    });
    expect(added.code, added.stdout + added.stderr).to.equal(1);
    expect(added.stderr).to.include(
      "rousseau-plugin-my-tool is added, but it does not load: RH_ERR_TOOL_COLLISION: Tool 'greet' of plugin 'my-tool' collides with the tool of the same name in plugin 'first'",
    );
    expect(added.stderr).to.include('Rename the tool or plugin in one of the two (names are global), or take it out: ');
  });

  it('add FOLDER leaves the config alone when it lists that folder by its path already', async () => {
    tmp.write(
      'my-tool/package.json',
      JSON.stringify({ name: 'rousseau-plugin-my-tool', version: '0.1.0', rousseau: { plugin: './src/index.mjs' } }),
    );
    tmp.write('my-tool/src/index.mjs', "export default { name: 'my-tool', version: '0.1.0', tools: [] };");
    const config = `${JSON.stringify({ plugins: ['../my-tool/src/index.mjs'] }, null, 2)}\n`;
    tmp.write('project/rousseau.config.json', config);
    // Offline: were npm install to run, it could not fetch a thing, and the test would say so.
    const added = await run(process.execPath, [BIN, 'add', '../my-tool'], {
      cwd: project,
      env: { npm_config_offline: 'true' },
    });
    expect(added.code, added.stderr).to.equal(0);
    expect(added.stdout).to.include(
      `rousseau-plugin-my-tool is already in ${join(project, 'rousseau.config.json')}, by its path: "../my-tool/src/index.mjs" (nothing installed, nothing added)`,
    );
    expect(readFileSync(join(project, 'rousseau.config.json'), 'utf8')).to.equal(config);
    expect(readFileSync(join(project, 'package.json'), 'utf8')).not.to.include('rousseau-plugin-my-tool');
  });

  it('add FOLDER inside the project lists it by its path and installs nothing (npm would install its devDependencies here)', async () => {
    tmp.write(
      'project/plugins/my-tool/package.json',
      JSON.stringify({
        name: 'rousseau-plugin-my-tool',
        version: '0.1.0',
        rousseau: { plugin: './index.mjs' },
        devDependencies: { 'a-package-npm-would-fetch': '^1.0.0' },
      }),
    );
    tmp.write(
      'project/plugins/my-tool/index.mjs',
      `export default { name: 'my-tool', version: '0.1.0', tools: [{ name: 'hi', description: 'Says hi.',
        inputSchema: { type: 'object', properties: {}, additionalProperties: false }, execute: () => 'hi' }] };`,
    );
    tmp.write(
      'project/rousseau.config.json',
      JSON.stringify({ builtins: false, plugins: [], policy: { default: 'allow' } }),
    );
    const env = withoutNpm();
    const added = await run(process.execPath, [BIN, 'add', './plugins/my-tool', '--json'], { cwd: project, env });
    expect(added.code, added.stderr).to.equal(0);
    expect(JSON.parse(added.stdout)).to.include({
      name: 'rousseau-plugin-my-tool',
      entry: './plugins/my-tool',
      installed: false,
    });
    expect(JSON.parse(readFileSync(join(project, 'rousseau.config.json'), 'utf8')).plugins).to.deep.equal([
      './plugins/my-tool',
    ]);
    expect(readFileSync(join(project, 'package.json'), 'utf8')).to.equal('{ "name": "project", "private": true }\n');
    const called = await run(process.execPath, [BIN, 'call', 'hi'], { cwd: project, env });
    expect(called.stdout, called.stderr).to.equal('hi\n');
    const again = await run(process.execPath, [BIN, 'add', './plugins/my-tool/'], { cwd: project, env });
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stdout).to.include('is already in').and.include('by its path: "./plugins/my-tool"');
    expect(existsSync(join(tmp.dir, 'npm-ran')), 'npm ran').to.equal(false);
  });

  /** stderr of `add SPEC` (exit 1, no npm run), where `module` (from tmp) imports a package not installed. */
  async function addedFailingImport(spec: string, module: string): Promise<string> {
    tmp.write(
      module,
      "import 'a-dependency-not-installed';\nexport default { name: 'dep', version: '1.0.0', tools: [] };",
    );
    const added = await run(process.execPath, [BIN, 'add', spec], { cwd: project, env: withoutNpm() });
    expect(added.code, added.stderr).to.equal(1);
    return added.stderr;
  }

  it('add FOLDER inside the project whose dependencies are not installed says to install them there', async () => {
    tmp.write(
      'project/plugins/dep/package.json',
      JSON.stringify({
        name: 'rousseau-plugin-dep',
        version: '1.0.0',
        dependencies: { 'a-dependency-not-installed': '^1.0.0' },
        rousseau: { plugin: './index.mjs' },
      }),
    );
    expect(await addedFailingImport('./plugins/dep', 'project/plugins/dep/index.mjs'))
      .to.include('rousseau-plugin-dep is added, but it does not load: RH_ERR_PLUGIN_IMPORT')
      .and.include(
        `Install its dependencies (npm install in ${join(project, 'plugins', 'dep')}: a folder listed by its path imports from its own node_modules), or take it out: `,
      );
  });

  it('add of an MCP server package adds nothing and shows the `mcp` entry that runs it', async () => {
    tmp.write(
      'project/servers/weather/package.json',
      JSON.stringify({
        name: '@acme/mcp-server-weather',
        version: '1.0.0',
        bin: { 'mcp-server-weather': './dist/index.js' },
        dependencies: { '@modelcontextprotocol/sdk': '^1.0.0' },
      }),
    );
    tmp.write('project/rousseau.config.json', JSON.stringify({ builtins: false, plugins: [] }));
    const added = await run(process.execPath, [BIN, 'add', './servers/weather', '--json'], {
      cwd: project,
      env: withoutNpm(),
    });
    expect(added.code, added.stderr).to.equal(1);
    const entry = { name: 'weather', mcp: { command: 'node', args: ['./servers/weather/dist/index.js'] } };
    expect(JSON.parse(added.stdout)).to.deep.include({ mcpEntry: entry, installed: false });
    expect(JSON.parse(added.stdout).error.code).to.equal('RH_ERR_PLUGIN_NOT_FOUND');
    expect(added.stderr)
      .to.include('@acme/mcp-server-weather is an MCP server, not a rousseau plugin: nothing was added to')
      .and.include(`\n  ${JSON.stringify(entry)}`)
      .and.not.include('npm uninstall');
    expect(JSON.parse(readFileSync(join(project, 'rousseau.config.json'), 'utf8')).plugins).to.deep.equal([]);
    expect(existsSync(join(tmp.dir, 'npm-ran'))).to.equal(false);
  });

  it('add of an installed MCP server package runs its command file with node, not npx; the package stays', async () => {
    tmp.write(
      'weather/package.json',
      JSON.stringify({ name: 'weather-mcp', version: '1.0.0', keywords: ['mcp'], bin: { 'weather-mcp': 'cli.mjs' } }),
    );
    tmp.write('weather/cli.mjs', '#!/usr/bin/env node\n');
    tmp.write('project/rousseau.config.json', JSON.stringify({ builtins: false, plugins: [] }));
    // A folder installs offline (npm links it): no registry is asked.
    const added = await run(process.execPath, [BIN, 'add', '../weather'], {
      cwd: project,
      env: { npm_config_offline: 'true' },
    });
    expect(added.code, added.stderr).to.equal(1);
    expect(added.stderr)
      .to.include(`\n  {"name":"weather","mcp":{"command":"node","args":["./node_modules/weather-mcp/cli.mjs"]}}\n`)
      .and.include('The package stays installed, for the entry to run (npm uninstall weather-mcp takes it out).');
    expect(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).dependencies).to.have.property(
      'weather-mcp',
    );
    expect(JSON.parse(readFileSync(join(project, 'rousseau.config.json'), 'utf8')).plugins).to.deep.equal([]);
  });

  // A file has no node_modules of its own: "npm install in …/broken.mjs" would name no folder at all.
  it('add FILE whose import fails says to fix the plugin, not to install in it', async () => {
    expect(await addedFailingImport('./broken.mjs', 'project/broken.mjs'))
      .to.include('./broken.mjs is added, but it does not load: RH_ERR_PLUGIN_IMPORT')
      .and.include('Fix the plugin (')
      .and.not.include('npm install in');
  });

  it('add FILE lists a plugin module by its path, with no npm run (npm would fail: it is no package); remove takes it out', async () => {
    tmp.write(
      'hello.mjs',
      `export default { name: 'hello', version: '1.0.0', tools: [{ name: 'hello', description: 'Says hello.',
        inputSchema: { type: 'object', properties: {}, additionalProperties: false }, execute: () => 'hello' }] };`,
    );
    tmp.write('project/rousseau.config.json', JSON.stringify({ builtins: false, policy: { default: 'allow' } }));
    const env = withoutNpm();
    const added = await run(process.execPath, [BIN, 'add', '../hello.mjs', '--isolation', 'inline'], {
      cwd: project,
      env,
    });
    expect(added.code, added.stderr).to.equal(0);
    expect(added.stdout).to.include('../hello.mjs is a plugin file, not a package: listed by its path, not installed');
    expect(JSON.parse(readFileSync(join(project, 'rousseau.config.json'), 'utf8')).plugins).to.deep.equal([
      { module: '../hello.mjs', isolation: 'inline' },
    ]);
    const called = await run(process.execPath, [BIN, 'call', 'hello'], { cwd: project, env });
    expect(called.stdout, called.stderr).to.equal('hello\n');
    const removed = await run(process.execPath, [BIN, 'remove', '../hello.mjs'], { cwd: project, env });
    expect(removed.code, removed.stderr).to.equal(0);
    expect(JSON.parse(readFileSync(join(project, 'rousseau.config.json'), 'utf8')).plugins).to.deep.equal([]);
    expect(existsSync(join(tmp.dir, 'npm-ran')), 'npm ran').to.equal(false);
  });

  it('remove NAME takes out the entry naming it, not another whose options name it too', async () => {
    for (const name of ['a', 'b'])
      tmp.write(`project/${name}.mjs`, `export default { name: '${name}', version: '0.1.0', tools: [] };`);
    const config = (entries: string) => `export default { builtins: false, plugins: [${entries}] };\n`;
    const first = "{ module: './a.mjs', options: { module: './b.mjs' } }";
    tmp.write('project/rousseau.config.mjs', config(`${first}, './b.mjs'`));
    const removed = await run(process.execPath, [BIN, 'remove', './b.mjs'], { cwd: project });
    expect(removed.code, removed.stderr).to.equal(0);
    expect(readFileSync(join(project, 'rousseau.config.mjs'), 'utf8')).to.equal(config(first));
  });
});
