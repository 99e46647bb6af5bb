import { expect } from 'chai';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, ROOT, runCli, runCliProcess } from '../helpers.ts';
import { fixture, projectPerTest } from './shared.ts';

describe('rousseau-host CLI', function () {
  this.timeout(60_000); // each test spawns the real CLI a few times
  const t = projectPerTest();
  const config = t.config;

  it('--version prints the version; --help lists the commands', async () => {
    const version = await runCli(['--version']);
    expect(version.code).to.equal(0);
    expect(version.stdout.trim()).to.equal(
      JSON.parse(readFileSync(join(FIXTURES, '..', '..', 'package.json'), 'utf8')).version,
    );
    const help = await runCli(['--help']);
    expect(help.code).to.equal(0);
    for (const command of ['tools', 'check', 'call', 'init']) expect(help.stdout).to.contain(`  ${command} `);
    const commandHelp = await runCli(['call', '--help']);
    expect(commandHelp.stdout).to.contain('Usage: rousseau-host call TOOL');
  });

  it('usage errors exit 2 and say what was wrong', async () => {
    const unknown = await runCli(['frobnicate']);
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.contain('unknown command "frobnicate"');
    const flag = await runCli(['tools', '--bogus', '--json']);
    expect(flag.code).to.equal(2);
    expect(flag.stderr).to.contain("'--bogus'");
    expect(JSON.parse(flag.stdout).error.code).to.equal('RH_ERR_USAGE');
    const missing = await runCli(['call'], { cwd: t.dir });
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.contain('call takes a TOOL name');
  });

  it('other errors say their code on stderr, the one docs/errors.md lists and --json carries; exit 1', async () => {
    const missing = join(t.dir, 'nowhere.json');
    const plain = await runCli(['tools', '--config', missing]);
    expect(plain.code).to.equal(1);
    expect(plain.stderr).to.equal(`rousseau-host: RH_ERR_CONFIG_NOT_FOUND: Config file not found: ${missing}\n`);
    const json = await runCli(['tools', '--config', missing, '--json']);
    expect(JSON.parse(json.stdout).error).to.deep.equal({
      code: 'RH_ERR_CONFIG_NOT_FOUND',
      message: `Config file not found: ${missing}`,
    });
  });

  it('a command name that is a property of every object (toString, constructor, __proto__) is an unknown command', async () => {
    for (const name of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      const r = await runCli([name, '--json'], { cwd: t.dir });
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr).to.contain(`unknown command "${name}"`).and.not.contain('TypeError');
      expect(JSON.parse(r.stdout)).to.deep.equal({
        error: { code: 'RH_ERR_USAGE', message: `unknown command "${name}"` },
      });
    }
  });

  it('a one-shot command exits once its answer is printed, even if a plugin left a timer running', async () => {
    config({ builtins: false, plugins: [{ module: fixture('timers.ts') }], policy: { default: 'allow' } });
    const r = await runCliProcess(['call', 'tick'], { cwd: t.dir, timeoutMs: 8000 });
    expect(r.code).to.equal(0);
    expect(r.stdout).to.equal('tick\n');
    const tools = await runCliProcess(['tools', '--json'], { cwd: t.dir, timeoutMs: 8000 });
    expect(tools.code).to.equal(0);
  });

  it('init writes a commented rousseau.config.ts that loads, and refuses to overwrite it', async () => {
    const r = await runCli(['init'], { cwd: t.dir });
    expect(r.code).to.equal(0);
    const file = join(t.dir, 'rousseau.config.ts');
    expect(existsSync(file)).to.equal(true);
    const written = readFileSync(file, 'utf8');
    expect(written).to.contain('defineConfig').and.contain('// ');
    // The reference it points at is a heading of the README its package carries.
    const headings = readFileSync(join(ROOT, 'README.md'), 'utf8').match(/^#+ .+$/gm) ?? [];
    expect(headings).to.include('## Config reference');
    expect(written).to.contain('"Config reference" in node_modules/rousseau-host/README.md');
    // A link only where one exists: the package names no repository, so no URL of one.
    const { repository } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { repository?: unknown };
    const links = written.match(/https?:\/\/\S+/g) ?? [];
    expect(links, 'links to a repository package.json does not name').to.deep.equal(
      repository === undefined
        ? []
        : links.filter((l) => l.startsWith(String((repository as { url?: string }).url ?? repository))),
    );
    const tools = await runCli(['tools', '--json'], { cwd: t.dir });
    expect(tools.code, tools.stderr).to.equal(0);
    expect(JSON.parse(tools.stdout)).to.have.property('plugins');
    // The commented `serve` line is a config that loads once uncommented, and the page it names exists.
    expect(readFileSync(join(ROOT, 'docs', 'serve.md'), 'utf8')).to.match(/^# Serving a team$/m);
    expect(written).to.contain('"Serving a team" in node_modules/rousseau-host/docs/serve.md');
    writeFileSync(file, written.replace('  // serve: {', '  serve: {'));
    const served = await runCli(['tools', '--json'], { cwd: t.dir });
    expect(served.code, served.stderr).to.equal(0);
    writeFileSync(file, written);
    const again = await runCli(['init'], { cwd: t.dir });
    expect(again.code).to.equal(2); // a usage error, like every RH_ERR_USAGE
    expect(again.stderr).to.contain('already exists');
  });

  it('init never writes through a symlink in the directory (a dangling one would have created its target)', async () => {
    const target = join(t.dir, 'elsewhere', 'profile');
    mkdirSync(join(t.dir, 'elsewhere'));
    symlinkSync(target, join(t.dir, 'rousseau.config.ts'));
    for (const args of [['init'], ['init', '--force']]) {
      const r = await runCli(args, { cwd: t.dir });
      expect(r.code, args.join(' ')).to.equal(2);
      expect(r.stderr).to.contain(`${join(t.dir, 'rousseau.config.ts')} is a symlink`);
    }
    expect(existsSync(target)).to.equal(false);
  });

  it('logs are JSON lines on stderr when it is not a terminal, each carrying its plugin', async () => {
    config({ builtins: false, plugins: [{ module: fixture('logs.ts'), isolation: 'inline' }] });
    const r = await runCli(['tools', '--json'], { cwd: t.dir });
    expect(r.code).to.equal(0);
    const lines = r.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.find((l) => l.message === 'cache 50% warm')).to.include({ level: 'warn', plugin: fixture('logs.ts') });
  });

  it('logs go to stderr only: stdout of --json is exactly one JSON document', async () => {
    config({ builtins: false, plugins: [fixture('echo.ts'), fixture('broken-import.ts')], log: { level: 'debug' } });
    const r = await runCli(['tools', '--json', '--log-level', 'debug'], { cwd: t.dir });
    expect(() => JSON.parse(r.stdout)).to.not.throw();
    expect(r.stderr).to.contain('broken-import');
  });
});
