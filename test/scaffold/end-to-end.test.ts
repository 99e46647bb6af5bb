// From `npm create rousseau-tool` to a tool call, the way a plugin author gets there, in CI and
// offline: pack the scaffolder (so the template it carries is the one tested), scaffold from the
// tarball into a project outside the repo, give the new plugin a node_modules linked to this repo
// (no registry, no install), run its own `npm test` (which runs `rousseau-host check .` first),
// check it with its options, add the printed line to the project's config, and call its tool.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runCli, tempDir } from '../helpers.ts';
import { linkDependencies, run } from './helpers.ts';

describe('create-rousseau-tool, end to end', () => {
  let tmp: ReturnType<typeof tempDir>;
  before(() => (tmp = tempDir('rh-e2e-')));
  after(() => tmp.cleanup());

  it('packs, scaffolds a plugin whose own tests pass, and whose tool the host then calls', async function () {
    this.timeout(180_000); // several real processes in a row on a shared 2-core machine

    const packed = await run('npm', ['pack', '--json', '--pack-destination', tmp.dir], {
      cwd: join(ROOT, 'scripts', 'create-rousseau-tool'),
      timeoutMs: 60_000,
    });
    expect(packed.code, packed.stderr).to.equal(0);
    const [{ filename, files }] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
    const paths = files.map((f) => f.path);
    expect(paths).to.include.members([
      'index.js',
      'template.js',
      'template/_gitignore',
      'template/.mocharc.json',
      'template/src/index.ts',
      'template/test/host.test.ts',
    ]);
    expect(paths.filter((p) => p.includes('node_modules') || p.includes('bundle-template'))).to.deep.equal([]);
    const untar = await run('tar', ['-xzf', join(tmp.dir, filename), '-C', tmp.dir], { cwd: tmp.dir });
    expect(untar.code, untar.stderr).to.equal(0);

    const project = join(tmp.dir, 'project');
    tmp.write('project/package.json', '{ "name": "my-agent", "private": true, "type": "module" }\n');
    tmp.write('project/rousseau.config.ts', 'export default { builtins: false, plugins: [] };\n');
    const created = await run(
      process.execPath,
      [join(tmp.dir, 'package', 'index.js'), 'weather', '--yes', '--description', 'Weather tools.'],
      { cwd: project },
    );
    expect(created.code, created.stderr).to.equal(0);
    const line = /^ {2}(plugins: \[.*\]),$/m.exec(created.stdout)?.[1];
    expect(line, created.stdout).to.equal("plugins: ['./weather']");

    const plugin = join(project, 'weather');
    linkDependencies(plugin);
    const tested = await run('npm', ['test'], { cwd: plugin, timeoutMs: 150_000, env: { npm_config_offline: 'true' } });
    expect(tested.code, `${tested.stdout}\n${tested.stderr}`).to.equal(0);
    expect(tested.stdout).to.include('ok  weather 0.1.0: 1 tools (count_words)'); // the pretest contract check
    expect(tested.stdout)
      .to.match(/\b\d+ passing\b/)
      .and.not.match(/failing|pending/);

    const checked = await runCli(
      ['check', './weather', '--options', '{"baseUrl":"https://api.example.com/v1"}', '--json'],
      { cwd: project, timeoutMs: 60_000 },
    );
    expect(checked.code, checked.stderr).to.equal(0);
    expect(JSON.parse(checked.stdout)).to.deep.include({ ok: true, plugin: 'weather', violations: [], warnings: [] });
    expect(JSON.parse(checked.stdout).tools).to.have.members(['api_get', 'count_words']);

    const config = join(project, 'rousseau.config.ts');
    tmp.write('project/rousseau.config.ts', readFileSync(config, 'utf8').replace('plugins: []', line!));
    const called = await runCli(['call', 'count_words', '{"text":"To be, or not to be"}', '--json', '--yes'], {
      cwd: project,
      timeoutMs: 60_000,
    });
    expect(called.code, called.stderr).to.equal(0);
    expect(JSON.parse(called.stdout)).to.include({
      tool: 'count_words',
      isError: false,
      content: '6 words, 4 distinct\nbe: 2\nto: 2\nnot: 1\nor: 1',
    });
  });
});
