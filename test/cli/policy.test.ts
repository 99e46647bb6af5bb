// `rousseau-host policy check TOOL JSON`: the real bin, a real config in a temp dir.
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, runCliProcess, tempDir } from '../helpers.ts';

// A plain-JS plugin (no transpiling, so each CLI run starts fast) whose tool records that it ran.
const PLUGIN = `import { writeFileSync } from 'node:fs';
export default { name: 'shellish', version: '1.0.0', tools: [{
  name: 'shell_run', description: 'Pretends to run a command.',
  inputSchema: { type: 'object', properties: { command: { type: 'string', description: 'The command.' } }, required: ['command'], additionalProperties: false },
  execute: ({ command }) => { writeFileSync(new URL('./ran', import.meta.url), command); return 'ran'; },
}, {
  name: 'peek', description: 'Reads nothing.', annotations: { readOnly: true },
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  execute: () => 'nothing',
}] };
`;
const CONFIG = `export default {
  builtins: false,
  serve: { auth: { tokens: [{ name: 'ops-bot', token: 'ops-bot-token-0123456789abcdef', scopes: ['ops'] }] } },
  plugins: [{ module: './shellish.mjs', isolation: 'inline' }],
  policy: {
    default: 'ask',
    deny: [
      { tool: 'shell_run', match: '"command":"rm -rf', reason: 'no recursive deletes' },
      { tool: 'shell_run', callers: ['intern'], reason: 'not for interns' },
    ],
    allow: [
      { tool: 'shell_run', where: { command: 'ls( -[a-z]+)*' } },
      { tool: 'shell_run', scopes: ['ops', 'admin'] },
    ],
  },
};
`;

describe('cli: policy check', () => {
  let dir: ReturnType<typeof tempDir>;
  before(() => {
    dir = tempDir();
    dir.write('shellish.mjs', PLUGIN);
    dir.write('rousseau.config.mjs', CONFIG);
  });
  after(() => dir.cleanup());

  it('--json: the decision, the rule and the canonical input of an escaped, spaced input; exit 0; nothing runs, nothing is audited', async () => {
    const r = await runCli(['policy', 'check', 'shell_run', '{ "\\u0063ommand" : "\\u0072m -rf /" }', '--json'], {
      cwd: dir.dir,
    });
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.deep.equal({
      decision: 'deny',
      rule: {
        tool: 'shell_run',
        match: '"command":"rm -rf',
        reason: 'no recursive deletes',
        id: 'policy.deny[0]',
        list: 'deny',
      },
      reason: 'no recursive deletes',
      canonical: '{"command":"rm -rf /"}',
    });
    expect(existsSync(join(dir.dir, 'ran'))).to.equal(false);
    expect(existsSync(join(dir.dir, '.rousseau'))).to.equal(false);
  });

  it('prints the decision for people; a default decision has no rule, and says which default made it', async () => {
    const allowed = await runCli(['policy', 'check', 'shell_run', '{"command":"ls -la"}'], { cwd: dir.dir });
    expect(allowed.code).to.equal(0);
    expect(allowed.stdout).to.equal('allow  (rule policy.allow[0])\ncanonical input: {"command":"ls -la"}\n');
    const asked = await runCliProcess(['policy', 'check', 'shell_run', '-', '--json'], {
      cwd: dir.dir,
      input: '{"command":"ls && rm -rf x"}',
    });
    expect(asked.code).to.equal(0);
    expect(JSON.parse(asked.stdout)).to.deep.equal({
      decision: 'ask',
      default: 'default',
      canonical: '{"command":"ls && rm -rf x"}',
    });
    const asking = await runCli(['policy', 'check', 'shell_run', '{"command":"make"}'], { cwd: dir.dir });
    expect(asking.stdout).to.equal('ask  (no rule matched: policy.default)\ncanonical input: {"command":"make"}\n');
    // `default: 'ask'`, yet allowed: the read-only tool's own default decided, and the check says so.
    const peek = await runCli(['policy', 'check', 'peek'], { cwd: dir.dir });
    expect(peek.stdout).to.equal(
      'allow  (no rule matched: policy.readOnlyDefault, as the tool is annotated readOnly)\ncanonical input: {}\n',
    );
    const peekJson = await runCli(['policy', 'check', 'peek', '--json'], { cwd: dir.dir });
    expect(JSON.parse(peekJson.stdout)).to.deep.equal({
      decision: 'allow',
      default: 'readOnlyDefault',
      canonical: '{}',
    });
  });

  it('input is validated first: invalid input or an unknown tool is exit 1 with the reason; usage errors are exit 2', async () => {
    const invalid = await runCli(['policy', 'check', 'shell_run', '{"command":"ls","sudo":true}', '--json'], {
      cwd: dir.dir,
    });
    expect(invalid.code).to.equal(1);
    expect(JSON.parse(invalid.stdout).error).to.include({ code: 'invalid_input' });
    expect(invalid.stderr).to.include('/sudo');
    const unknown = await runCli(['policy', 'check', 'nope', '{}', '--json'], { cwd: dir.dir });
    expect(unknown.code).to.equal(1);
    expect(JSON.parse(unknown.stdout).error).to.include({ code: 'unknown_tool' });
    const usage = await runCli(['policy', 'check'], { cwd: dir.dir });
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.include('policy check takes a TOOL name');
  });

  it('--caller and --scope: rules that name callers and scopes apply; a tool hidden from the caller gets the decision and the rule that hide it, exit 0', async () => {
    const ops = await runCli(
      ['policy', 'check', 'shell_run', '{"command":"make"}', '--caller', 'ana', '--scope', 'ops', '--json'],
      {
        cwd: dir.dir,
      },
    );
    expect(ops.code, ops.stderr).to.equal(0);
    expect(JSON.parse(ops.stdout)).to.include({ decision: 'allow' });
    expect(JSON.parse(ops.stdout).rule).to.include({ id: 'policy.allow[1]' });
    const noScope = await runCli(['policy', 'check', 'shell_run', '{"command":"make"}', '--caller', 'ana', '--json'], {
      cwd: dir.dir,
    });
    expect(JSON.parse(noScope.stdout)).to.deep.equal({
      decision: 'ask',
      default: 'default',
      canonical: '{"command":"make"}',
    });
    const intern = await runCli(['policy', 'check', 'shell_run', '{"command":"ls"}', '--caller', 'intern', '--json'], {
      cwd: dir.dir,
    });
    expect(intern.code, intern.stderr).to.equal(0);
    expect(JSON.parse(intern.stdout)).to.deep.include({
      decision: 'deny',
      reason: 'not for interns',
      hidden: true,
      canonical: '{"command":"ls"}',
    });
    expect(JSON.parse(intern.stdout).rule).to.include({ id: 'policy.deny[1]' });
    const internText = await runCli(['policy', 'check', 'shell_run', '{"command":"ls"}', '--caller', 'intern'], {
      cwd: dir.dir,
    });
    expect(internText.stdout).to.equal(
      'deny  (rule policy.deny[1]: not for interns)\nhidden from caller "intern": their tools/list leaves shell_run out, and their call to it answers unknown_tool\ncanonical input: {"command":"ls"}\n',
    );
    // The input is still checked against the tool's schema.
    const internBad = await runCli(['policy', 'check', 'shell_run', '{"cmd":"ls"}', '--caller', 'intern', '--json'], {
      cwd: dir.dir,
    });
    expect(internBad.code).to.equal(1);
    expect(JSON.parse(internBad.stdout).error).to.include({ code: 'invalid_input' });
    // A token's caller holds the scopes its entry in serve.auth.tokens gives it, as its requests do;
    // --scope says otherwise.
    const bot = await runCli(['policy', 'check', 'shell_run', '{"command":"make"}', '--caller', 'ops-bot'], {
      cwd: dir.dir,
    });
    expect(bot.stdout).to.equal(
      'allow  (rule policy.allow[1])\nscopes of token "ops-bot" (serve.auth.tokens): ops\ncanonical input: {"command":"make"}\n',
    );
    const botJson = await runCli(
      ['policy', 'check', 'shell_run', '{"command":"make"}', '--caller', 'ops-bot', '--json'],
      { cwd: dir.dir },
    );
    expect(JSON.parse(botJson.stdout)).to.deep.include({ decision: 'allow', tokenScopes: ['ops'] });
    const botScoped = await runCli(
      ['policy', 'check', 'shell_run', '{"command":"make"}', '--caller', 'ops-bot', '--scope', 'read', '--json'],
      { cwd: dir.dir },
    );
    expect(JSON.parse(botScoped.stdout)).to.deep.equal({
      decision: 'ask',
      default: 'default',
      canonical: '{"command":"make"}',
    });
    // Without a caller, the rule for interns does not apply.
    const local = await runCli(['policy', 'check', 'shell_run', '{"command":"ls"}'], { cwd: dir.dir });
    expect(local.stdout).to.include('allow  (rule policy.allow[0])');
    const usage = await runCli(['policy', 'check', 'shell_run', '{}', '--scope', 'ops'], { cwd: dir.dir });
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.include('--scope needs --caller');
  });
});
