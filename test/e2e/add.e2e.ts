// `rousseau-host add` and `remove` for real, run by `npm run test:e2e`: npm installs a plugin package
// from a local folder or tarball (offline: no registry), the config is edited in place, and the host
// then loads the plugin. What `add` refuses before npm runs is in test/cli/add.test.ts.
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, tempDir } from '../helpers.ts';
import { run } from '../scaffold/helpers.ts';

const OFFLINE = { npm_config_offline: 'true' };

function cli(args: string[], cwd: string) {
  return run(process.execPath, [BIN, ...args], { cwd, env: OFFLINE, timeoutMs: 90_000 });
}

const PLUGIN = `import Type from 'typebox';
export default {
  name: 'greet',
  version: '1.2.0',
  options: Type.Object({ greeting: Type.String({ description: 'How to greet.' }) }, { additionalProperties: false }),
  tools: [{
    name: 'greet',
    description: 'Greets someone.',
    inputSchema: Type.Object({ who: Type.String({ description: 'Who to greet.' }) }, { additionalProperties: false }),
    execute: async ({ who }: { who: string }, ctx: { options: { greeting: string } }) => \`\${ctx.options.greeting}, \${who}\`,
  }],
};
`;

const TS_CONFIG = `// The team's config: these comments must survive an edit.
import { defineConfig } from 'rousseau-host';

export default defineConfig({
  builtins: false, // no built-ins here
  plugins: [
    /* none yet */
  ],
  policy: { default: 'allow' },
});
`;

describe('rousseau-host add / remove, installing with npm', function () {
  this.timeout(240_000); // each step runs npm for real
  let tmp: ReturnType<typeof tempDir>;
  let project: string;

  beforeEach(() => {
    tmp = tempDir('rh-add-');
    tmp.write(
      'greet/package.json',
      JSON.stringify({
        name: 'rousseau-plugin-greet',
        version: '1.2.0',
        type: 'module',
        keywords: ['rousseau-plugin'],
        rousseau: { plugin: './src/index.ts' },
      }),
    );
    tmp.write('greet/src/index.ts', PLUGIN);
    tmp.write('project/package.json', '{ "name": "project", "private": true }\n');
    project = join(tmp.dir, 'project');
  });
  afterEach(() => tmp.cleanup());

  it('adds a folder to a TS config with its isolation and options, keeping the comments; remove takes it back out', async () => {
    tmp.write('project/rousseau.config.ts', TS_CONFIG);
    const config = join(project, 'rousseau.config.ts');

    const dry = await cli(['add', '../greet', '--isolation', 'process', '--dry-run'], project);
    expect(dry.code, dry.stderr).to.equal(0);
    expect(dry.stdout).to.include('Would run: npm install ../greet');
    expect(readFileSync(config, 'utf8')).to.equal(TS_CONFIG);
    expect(existsSync(join(project, 'node_modules'))).to.equal(false);

    const added = await cli(
      ['add', '../greet', '--isolation', 'process', '--options', '{"greeting":"Hello"}'],
      project,
    );
    expect(added.code, added.stderr).to.equal(0);
    expect(added.stdout).to.include('Installed rousseau-plugin-greet@1.2.0');
    // This host is not the project's own (the repo's bin): the hint names it as found on PATH.
    expect(added.stdout).to.include('Next: rousseau-host tools\n');
    const edited = readFileSync(config, 'utf8');
    expect(edited).to.equal(
      TS_CONFIG.replace(
        '    /* none yet */\n',
        "    /* none yet */\n    { module: 'rousseau-plugin-greet', isolation: 'process', options: { greeting: 'Hello' } },\n",
      ),
    );
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    expect(manifest.dependencies).to.deep.equal({ 'rousseau-plugin-greet': 'file:../greet' });

    const called = await cli(['call', 'greet', '{"who":"Ada"}', '--json'], project);
    expect(called.code, called.stderr).to.equal(0);
    expect(JSON.parse(called.stdout)).to.include({ isError: false, content: 'Hello, Ada' });

    const again = await cli(['add', '../greet'], project);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stdout).to.include('rousseau-plugin-greet is already in');
    const reshaped = await cli(['add', '../greet', '--options', '{"greeting":"Yo"}'], project);
    expect(reshaped.code, reshaped.stderr).to.equal(0);
    expect(reshaped.stderr).to.include(
      `rousseau-plugin-greet is already in ${config}; its entry there was left as it is, without --options: edit it there`,
    );
    expect(readFileSync(config, 'utf8')).to.equal(edited);

    const dryRemove = await cli(['remove', 'rousseau-plugin-greet', '--dry-run'], project);
    expect(dryRemove.code, dryRemove.stderr).to.equal(0);
    expect(readFileSync(config, 'utf8')).to.equal(edited);

    // The short name, as `tools` shows the plugin and as the config accepts it.
    const removed = await cli(['remove', 'greet'], project);
    expect(removed.code, removed.stderr).to.equal(0);
    expect(removed.stdout).to.include('Removed "rousseau-plugin-greet"');
    expect(readFileSync(config, 'utf8')).to.equal(TS_CONFIG);
    expect(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).dependencies ?? {}).to.deep.equal({});
    expect(existsSync(join(project, 'node_modules', 'rousseau-plugin-greet'))).to.equal(false);

    const gone = await cli(['remove', 'rousseau-plugin-greet', '--json'], project);
    expect(gone.code).to.equal(2);
    expect(JSON.parse(gone.stdout).error.code).to.equal('RH_ERR_USAGE');
  });

  it('says, exit 1, when what it added does not load: a plugin that fails the contract check', async () => {
    tmp.write('project/rousseau.config.ts', TS_CONFIG);
    // The same plugin with a property the model would get no description for.
    tmp.write('greet/src/index.ts', PLUGIN.replace("Type.String({ description: 'Who to greet.' })", 'Type.String()'));
    const added = await cli(['add', '../greet', '--options', '{"greeting":"Hello"}'], project);
    expect(added.code).to.equal(1);
    expect(added.stdout).to.include('Added');
    expect(added.stdout).to.not.include('Next: npx rousseau-host tools');
    expect(added.stderr).to.include('rousseau-plugin-greet is added, but it does not load: RH_ERR_PLUGIN_CONTRACT');
    expect(added.stderr).to.include('property "who" has no description');
    expect(added.stderr).to.include('rousseau-host remove rousseau-plugin-greet');
    // Nothing is lost: it is in the config, to fix or to remove.
    expect(readFileSync(join(project, 'rousseau.config.ts'), 'utf8')).to.include("module: 'rousseau-plugin-greet'");
  });

  it('says options the plugin refuses are to be fixed in the config file, which it names', async () => {
    const added = await cli(['add', '../greet', '--options', '{"greting":"Hello"}'], project);
    expect(added.code).to.equal(1);
    const config = join(project, 'rousseau.config.ts');
    expect(added.stderr).to.include('rousseau-plugin-greet is added, but it does not load: RH_ERR_PLUGIN_OPTIONS');
    expect(added.stderr).to.include(
      `Fix its options in ${config} (the entry of rousseau-plugin-greet), or take it out: rousseau-host remove rousseau-plugin-greet`,
    );
    expect(added.stderr).to.not.include('Fix the plugin');
  });

  it('adds a tarball to a JSON config, and removes it', async () => {
    const packed = await run('npm', ['pack', '--json', '--pack-destination', tmp.dir, '../greet'], {
      cwd: project,
      env: OFFLINE,
      timeoutMs: 60_000,
    });
    expect(packed.code, packed.stderr).to.equal(0);
    const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
    tmp.write('project/rousseau.config.json', '{\n  "builtins": false,\n  "policy": { "default": "allow" }\n}\n');

    const added = await cli(['add', join('..', filename), '--options', '{"greeting":"Hi"}', '--json'], project);
    expect(added.code, added.stderr).to.equal(0);
    expect(JSON.parse(added.stdout)).to.deep.include({
      name: 'rousseau-plugin-greet',
      version: '1.2.0',
      entry: { module: 'rousseau-plugin-greet', options: { greeting: 'Hi' } },
      created: false,
      installed: true,
    });
    const config = JSON.parse(readFileSync(join(project, 'rousseau.config.json'), 'utf8'));
    expect(config).to.deep.equal({
      builtins: false,
      policy: { default: 'allow' },
      plugins: [{ module: 'rousseau-plugin-greet', options: { greeting: 'Hi' } }],
    });
    // A tarball is copied in, not linked: the plugin loads from node_modules.
    expect(existsSync(join(project, 'node_modules', 'rousseau-plugin-greet', 'src', 'index.ts'))).to.equal(true);
    const tools = await cli(['tools', '--json'], project);
    expect(tools.code, tools.stderr).to.equal(0);
    const [plugin] = JSON.parse(tools.stdout).plugins;
    expect(plugin).to.include({ name: 'greet', status: 'loaded' });
    expect(plugin.file).to.equal(join(project, 'node_modules', 'rousseau-plugin-greet', 'src', 'index.ts'));

    const removed = await cli(['remove', 'rousseau-plugin-greet'], project);
    expect(removed.code, removed.stderr).to.equal(0);
    expect(JSON.parse(readFileSync(join(project, 'rousseau.config.json'), 'utf8')).plugins).to.deep.equal([]);
  });

  it('creates a config when there is none, and prints the line when a config cannot be edited safely', async () => {
    const created = await cli(['add', '../greet', '--options', '{"greeting":"Hey"}'], project);
    expect(created.code, created.stderr).to.equal(0);
    const config = readFileSync(join(project, 'rousseau.config.ts'), 'utf8');
    expect(config).to.include("{ module: 'rousseau-plugin-greet', options: { greeting: 'Hey' } },");
    expect(config).to.include('// Plugins: a path'); // the commented config `init` writes

    tmp.write('other/package.json', '{ "name": "other", "private": true }\n');
    const computed = "const list = ['./a'];\nexport default { plugins: list.map((p) => p) };\n";
    tmp.write('other/rousseau.config.ts', computed);
    const other = join(tmp.dir, 'other');
    const refused = await cli(['add', '../greet'], other);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include('cannot edit').and.include('safely');
    expect(refused.stdout.trim()).to.equal("plugins: ['rousseau-plugin-greet']");
    expect(readFileSync(join(other, 'rousseau.config.ts'), 'utf8')).to.equal(computed);
  });
});
