import { expect } from 'chai';
import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, ROOT, runCli, tempDir } from '../helpers.ts';

const fixture = (name: string) => join(FIXTURES, 'plugins', name);

describe('rousseau-host CLI', function () {
  this.timeout(60_000); // each test spawns the real CLI a few times
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => {
    t = tempDir();
    t.write('package.json', '{"name":"cli-test"}');
  });
  afterEach(() => t.cleanup());

  const config = (value: unknown) => t.write('rousseau.config.json', JSON.stringify(value));

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

  it('what a plugin prints to stdout goes to stderr: --json stdout stays one JSON document (inline and worker)', async () => {
    const noisy = join(FIXTURES, 'mcp', 'noisy.ts');
    for (const isolation of ['inline', 'worker']) {
      config({
        builtins: false,
        plugins: [{ module: noisy, isolation }],
        policy: { default: 'allow' },
        log: { audit: false },
      });
      const called = await runCli(['call', 'noisy_add', '{"a":1,"b":2}', '--json'], { cwd: t.dir });
      expect(called.code, called.stderr).to.equal(0);
      expect(JSON.parse(called.stdout), isolation).to.include({ tool: 'noisy_add', isError: false, content: '3' });
      if (isolation === 'inline')
        expect(called.stderr).to.contain('noisy: adding 1 and 2').and.contain('noisy: raw write');
      const listed = await runCli(['tools', '--json'], { cwd: t.dir });
      expect(JSON.parse(listed.stdout).plugins[0], isolation).to.include({ name: 'noisy', status: 'loaded' });
      expect(listed.stderr).to.contain('noisy plugin: loading');
      const plain = await runCli(['call', 'noisy_add', '{"a":2,"b":2}'], { cwd: t.dir });
      expect(plain.stdout, isolation).to.equal('4\n');
    }
  });

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

  it('--config and --cwd pick the config', async () => {
    t.write('elsewhere/my.json', JSON.stringify({ builtins: false, plugins: [fixture('echo.ts')] }));
    const r = await runCli(['tools', '--json', '--config', 'elsewhere/my.json'], { cwd: t.dir });
    expect(JSON.parse(r.stdout).plugins.map((p: { name: string }) => p.name)).to.deep.equal(['echo']);
    const r2 = await runCli(['--cwd', join(t.dir, 'elsewhere'), 'tools', '--json', '--config', 'my.json']);
    expect(JSON.parse(r2.stdout).plugins.map((p: { name: string }) => p.name)).to.deep.equal(['echo']);
  });

  it('check PATH: exit 0 and the tools for a good plugin; exit 1 and every violation for a broken one', async () => {
    const ok = await runCli(['check', fixture('echo.ts')]);
    expect(ok.code).to.equal(0);
    expect(ok.stdout).to.match(/^ok {2}echo 1\.0\.0: 1 tool \(echo\)/);
    const bad = await runCli(['check', fixture('broken-contract.ts'), '--json']);
    expect(bad.code).to.equal(1);
    const report = JSON.parse(bad.stdout) as {
      ok: boolean;
      violations: { pointer: string; file: string; tool?: string }[];
    };
    expect(report.ok).to.equal(false);
    expect(report.violations.length).to.be.greaterThan(4);
    expect(report.violations.every((v) => v.file === fixture('broken-contract.ts'))).to.equal(true);
    expect(report.violations.map((v) => v.pointer)).to.include('/tools/0/inputSchema/required/1');
    const human = await runCli(['check', fixture('broken-contract.ts')]);
    expect(human.stdout).to.contain('FAIL').and.contain('/tools/0/inputSchema/required/1');
  });

  it("check --options validates a plugin's options", async () => {
    const bad = await runCli(['check', fixture('broken-options.ts'), '--options', '{"apiKey":"abc"}']);
    expect(bad.code).to.equal(1);
    expect(bad.stdout).to.contain('RH_ERR_PLUGIN_OPTIONS').and.contain('options/apiKey');
    const good = await runCli([
      'check',
      fixture('broken-options.ts'),
      '--options',
      '{"apiKey":"abcdefghij","retries":2}',
    ]);
    expect(good.code).to.equal(0);
  });

  it('call: the content on stdout, exit 0; an error result exits 1; --json has the documented shape', async () => {
    config({ builtins: false, plugins: [{ module: fixture('kit.ts') }], policy: { default: 'allow' } });
    const ok = await runCli(['call', 'greet', '{"who":"Ada"}'], { cwd: t.dir });
    expect(ok.code).to.equal(0);
    expect(ok.stdout).to.equal('hello Ada\n');
    const json = await runCli(['call', 'greet', '{"who":5}', '--json'], { cwd: t.dir });
    expect(json.code).to.equal(1);
    const result = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(result).to.include({ tool: 'greet', isError: true, code: 'invalid_input' });
    expect(result.durationMs).to.be.a('number');
    expect(result.content).to.contain('/who');
    const stdin = await runCli(['call', 'greet', '-', '--json'], { cwd: t.dir, input: '{"who":"Bo","times":2}' });
    expect(stdin.stdout, stdin.stderr).to.not.equal('');
    expect(JSON.parse(stdin.stdout)).to.include({ isError: false, content: 'hello Bo\nhello Bo' });
    const unknown = await runCli(['call', 'nope', '{}', '--json'], { cwd: t.dir });
    expect(unknown.code).to.equal(1);
    expect(JSON.parse(unknown.stdout).code).to.equal('unknown_tool');
  });

  it('call: --json shows blocks and data; text mode prints the text and names the other blocks, never their base64', async () => {
    config({ builtins: false, plugins: [{ module: fixture('rich.ts') }], policy: { default: 'allow' } });
    const json = await runCli(['call', 'every_block', '--json'], { cwd: t.dir });
    expect(json.code, json.stderr).to.equal(0);
    const result = JSON.parse(json.stdout) as { blocks: { type: string; data?: string }[] };
    expect(result.blocks.map((b) => b.type)).to.deep.equal(['text', 'audio', 'resource_link', 'resource', 'resource']);
    expect(result.blocks[1]?.data).to.equal(Buffer.from('RIFF....WAVE').toString('base64'));
    const text = await runCli(['call', 'every_block'], { cwd: t.dir });
    expect(text.stdout).to.equal(
      [
        'all kinds',
        '[audio audio/wav, 12 B]',
        '[resource link file:///notes.md "notes" text/markdown]',
        '[resource file:///a.txt text/plain]',
        'embedded text',
        '[resource file:///b.bin, 3 B]',
        '',
      ].join('\n'),
    );
    const picture = await runCli(['call', 'picture'], { cwd: t.dir });
    expect(picture.stdout).to.equal('a red dot\n[image image/png, 70 B]\n');
    const weather = await runCli(['call', 'weather', '{"mode":"text"}', '--json'], { cwd: t.dir });
    expect(JSON.parse(weather.stdout)).to.deep.include({ data: { city: 'Paris', temperature: 21.5 } });
  });

  it('call: an ask decision is denied without a terminal, approved with --yes', async () => {
    config({
      builtins: false,
      plugins: [{ module: fixture('echo.ts') }],
      policy: { default: 'ask', readOnlyDefault: 'ask' },
    });
    const denied = await runCli(['call', 'echo', '{"text":"x"}', '--json'], { cwd: t.dir });
    expect(JSON.parse(denied.stdout)).to.include({ code: 'denied' });
    expect(JSON.parse(denied.stdout).content).to.contain('--yes');
    const yes = await runCli(['call', 'echo', '{"text":"x"}', '--json', '--yes'], { cwd: t.dir });
    expect(JSON.parse(yes.stdout)).to.include({ isError: false, content: 'x' });
  });

  it('a one-shot command exits once its answer is printed, even if a plugin left a timer running', async () => {
    config({ builtins: false, plugins: [{ module: fixture('timers.ts') }], policy: { default: 'allow' } });
    const r = await runCli(['call', 'tick'], { cwd: t.dir, timeoutMs: 8000 });
    expect(r.code).to.equal(0);
    expect(r.stdout).to.equal('tick\n');
    const tools = await runCli(['tools', '--json'], { cwd: t.dir, timeoutMs: 8000 });
    expect(tools.code).to.equal(0);
  });

  it('init writes a commented rousseau.config.ts that loads, and refuses to overwrite it', async () => {
    const r = await runCli(['init'], { cwd: t.dir });
    expect(r.code).to.equal(0);
    const file = join(t.dir, 'rousseau.config.ts');
    expect(existsSync(file)).to.equal(true);
    const written = readFileSync(file, 'utf8');
    expect(written).to.contain('defineConfig').and.contain('// ');
    // The reference it points at is a heading of the README (the packaged copy and GitHub's anchor).
    const anchor = /#([a-z-]+)\n/.exec(written)?.[1];
    const headings = readFileSync(join(ROOT, 'README.md'), 'utf8').match(/^#+ .+$/gm) ?? [];
    expect(headings.map((h) => h.replace(/^#+ /, '').toLowerCase().replace(/ /g, '-'))).to.include(anchor);
    expect(written).to.contain('"Config reference" in node_modules/rousseau-host/README.md');
    const tools = await runCli(['tools', '--json'], { cwd: t.dir });
    expect(tools.code, tools.stderr).to.equal(0);
    expect(JSON.parse(tools.stdout)).to.have.property('plugins');
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
