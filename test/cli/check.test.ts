import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { runCli, tempDir } from '../helpers.ts';
import { fixture } from './shared.ts';

describe('rousseau-host check PATH', function () {
  this.timeout(60_000); // each test spawns the real CLI a few times; `check` needs no project

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

  it('check src/x.ts: a path written without ./ is the file there, not a package of that name', async () => {
    const t = tempDir();
    try {
      t.write('src/echo.ts', readFileSync(fixture('echo.ts'), 'utf8'));
      const r = await runCli(['check', 'src/echo.ts'], { cwd: t.dir });
      expect(r.code, r.stdout + r.stderr).to.equal(0);
      expect(r.stdout).to.match(/^ok {2}echo 1\.0\.0/);
      // A bare name stays a package name, as in a config.
      const bare = await runCli(['check', 'src'], { cwd: t.dir });
      expect(bare.code).to.equal(1);
      expect(bare.stdout).to.contain('RH_ERR_PLUGIN_NOT_FOUND');
    } finally {
      t.cleanup();
    }
  });

  it('check PATH: a plugin that fails still shows its warnings, and --strict reports them among the violations', async () => {
    const t = tempDir();
    try {
      // One violation (a property with no description) and one warning (an object open to other keys).
      t.write(
        'p.mjs',
        `export default { name: 'p', version: '1.0.0', tools: [{ name: 't', description: 'T.',
          inputSchema: { type: 'object', properties: { a: { type: 'string' } } }, execute: () => 'x' }] };`,
      );
      const human = await runCli(['check', './p.mjs'], { cwd: t.dir });
      expect(human.code).to.equal(1);
      expect(human.stdout).to.contain('property "a" has no description');
      expect(human.stdout).to.match(
        /\n {2}warning tool "t" at \/tools\/0\/inputSchema: object accepts keys it does not declare/,
      );
      const strict = await runCli(['check', './p.mjs', '--strict', '--json'], { cwd: t.dir });
      const report = JSON.parse(strict.stdout) as { violations: { pointer: string; severity: string }[] };
      expect(report.violations.map((v) => [v.pointer, v.severity])).to.deep.equal([
        ['/tools/0/inputSchema/properties/a/description', 'error'],
        ['/tools/0/inputSchema', 'error'],
      ]);
    } finally {
      t.cleanup();
    }
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
});
