// The sandbox commands run in (plugins/shell/sandbox.ts). A command must not read a secret from the
// environment of any ancestor: the host, nor the shell that started it. The host runs as the real
// CLI under a shell that holds the secret too; the probe reads every /proc/*/environ it can see.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Plugin } from '../../../core/contract.ts';
import { chooseSandbox } from '../../../plugins/shell/sandbox.ts';
import { loadPluginModule } from '../load.ts';
import { toolContext } from '../tool-context.ts';
import { BIN, ROOT, runCli, runCliProcess, tempDir } from '../../helpers.ts';

const SECRET = `sk-test-${process.pid}-${Date.now()}`;
// Everything a command could try: its parent's environment, and that of every pid it can see.
const PROBE =
  'for f in /proc/$PPID/environ /proc/[0-9]*/environ; do cat "$f" 2>/dev/null; done | tr "\\0" "\\n"; echo probed';

interface Called {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `rousseau-host call bash` under `/bin/sh`, both with the secret in their environment. */
function callUnderShell(cwd: string, input: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Promise<Called> {
  return new Promise((resolve, reject) => {
    // `; exit $?` keeps the shell alive as the host's parent, as a user's shell is.
    const child = spawn(
      '/bin/sh',
      ['-c', '"$@"; exit $?', 'sh', process.execPath, BIN, 'call', 'bash', JSON.stringify(input), '--json'],
      {
        cwd,
        env: { ...process.env, ROUSSEAU_TEST_API_KEY: SECRET, NO_COLOR: '1', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("plugins/shell sandbox: no ancestor's environment is readable", function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  const configure = (options: Record<string, unknown>) =>
    writeFileSync(
      join(tmp.dir, 'rousseau.config.mjs'),
      `export default ${JSON.stringify({ builtins: [{ name: 'shell', options }], policy: { default: 'allow' }, log: { audit: false } })};\n`,
    );

  beforeEach(() => (tmp = tempDir('rh-sandbox-')));
  afterEach(() => tmp.cleanup());

  for (const sandbox of ['auto', 'bwrap', 'unshare'] as const) {
    it(`sandbox "${sandbox}"${sandbox === 'auto' ? ' (the default)' : ''}: a command reads no secret from /proc/*/environ`, async () => {
      configure(sandbox === 'auto' ? {} : { sandbox });
      const r = await callUnderShell(tmp.dir, { command: PROBE });
      expect(r.code, r.stderr).to.equal(0);
      const result = JSON.parse(r.stdout) as { content: string };
      expect(result.content).to.contain('probed');
      expect(result.content).to.contain('PATH='); // the probe did read environments: its own
      expect(result.content).not.to.contain(SECRET);
    });
  }

  it('sandbox "none": the same probe finds the secret', async () => {
    configure({ sandbox: 'none' });
    const r = await callUnderShell(tmp.dir, { command: PROBE });
    expect(JSON.parse(r.stdout).content).to.contain(SECRET);
  });

  it('"auto" where no sandbox works: commands still run, and `tools` and a warning say why there is none', async () => {
    configure({});
    // Neither bwrap nor unshare can be found; node and the shells are named by absolute path.
    const tools = await runCliProcess(['tools', '--json'], { cwd: tmp.dir, env: { PATH: '/nonexistent' } });
    expect(tools.code, tools.stderr).to.equal(0);
    const bash = (JSON.parse(tools.stdout) as { plugins: { tools: { name: string; description: string }[] }[] }).plugins
      .flatMap((p) => p.tools)
      .find((t) => t.name === 'bash')!;
    expect(bash.description).to.contain(
      "No sandbox (none works here: bwrap: not found; unshare: not found): the command can read the host's files and the environment of the host's processes",
    );
    expect(tools.stderr).to.contain('bash runs commands without a sandbox');
  });

  it('bwrap, filesystem "workspace": the host\'s .rousseau (its audit trail) stays read-only, `writable` naming it or not', async () => {
    mkdirSync(join(tmp.dir, '.rousseau'));
    writeFileSync(join(tmp.dir, '.rousseau', 'audit.jsonl'), '{"event":"call"}\n');
    configure({ sandbox: 'bwrap', filesystem: 'workspace', writable: [join(tmp.dir, '.rousseau')] });
    const command = `echo '{"event":"forged"}' >> .rousseau/audit.jsonl; rm -f .rousseau/audit.jsonl; mv .rousseau elsewhere; echo hi > ok.txt && cat ok.txt`;
    const r = await callUnderShell(tmp.dir, { command });
    expect(JSON.parse(r.stdout).content, r.stderr).to.match(/Read-only file system[\s\S]*hi\n/);
    // The host's own lines for this call follow; no command wrote there.
    const trail = readFileSync(join(tmp.dir, '.rousseau', 'audit.jsonl'), 'utf8');
    expect(trail.startsWith('{"event":"call"}\n')).to.equal(true);
    expect(trail).to.not.include('forged');
  });

  it('bwrap, filesystem "workspace": the host\'s config stays read-only (code the host runs at its next start)', async () => {
    configure({ sandbox: 'bwrap', filesystem: 'workspace' });
    const config = readFileSync(join(tmp.dir, 'rousseau.config.mjs'), 'utf8');
    const command = `echo 'export default { policy: { default: "allow" } };' > rousseau.config.mjs; rm -f rousseau.config.mjs; echo hi > ok.txt && cat ok.txt`;
    const r = await callUnderShell(tmp.dir, { command });
    expect(JSON.parse(r.stdout).content, r.stderr).to.match(/Read-only file system[\s\S]*hi\n/);
    expect(readFileSync(join(tmp.dir, 'rousseau.config.mjs'), 'utf8')).to.equal(config);
    const tools = await runCliProcess(['tools', '--json'], { cwd: tmp.dir });
    const bash = (JSON.parse(tools.stdout) as { plugins: { tools: { name: string; description: string }[] }[] }).plugins
      .flatMap((p) => p.tools)
      .find((t) => t.name === 'bash')!;
    expect(bash.description).to.include(
      "the filesystem is read-only except the workspace (but .git, .rousseau, the host's config files), the temp directory.",
    );
  });

  it('bwrap, filesystem "workspace": .git stays read-only (a hook or core.fsmonitor would run outside at the next git command), unless readOnly leaves it out', async () => {
    mkdirSync(join(tmp.dir, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(tmp.dir, '.git', 'config'), '[core]\n');
    const command = `echo '[core] fsmonitor = "touch /tmp/owned"' >> .git/config; echo evil > .git/hooks/pre-commit; echo hi > ok.txt && cat ok.txt`;
    configure({ sandbox: 'bwrap', filesystem: 'workspace', writable: [join(tmp.dir, '.git')] });
    const r = await callUnderShell(tmp.dir, { command });
    expect(JSON.parse(r.stdout).content, r.stderr).to.match(
      /Read-only file system[\s\S]*Read-only file system[\s\S]*hi\n/,
    );
    expect(readFileSync(join(tmp.dir, '.git', 'config'), 'utf8')).to.equal('[core]\n');
    expect(existsSync(join(tmp.dir, '.git', 'hooks', 'pre-commit'))).to.equal(false);

    // A user who lets commands commit says so.
    configure({ sandbox: 'bwrap', filesystem: 'workspace', readOnly: ['.rousseau'] });
    const open = await callUnderShell(tmp.dir, {
      command: 'echo ok > .git/hooks/pre-commit && cat .git/hooks/pre-commit',
    });
    expect(JSON.parse(open.stdout).content, open.stderr).to.equal('ok\n[exit code 0]');
    // What the model is told, for this boundary and for the default one.
    const described = async () => {
      const tools = await runCliProcess(['tools', '--json'], { cwd: tmp.dir });
      return (JSON.parse(tools.stdout) as { plugins: { tools: { name: string; description: string }[] }[] }).plugins
        .flatMap((p) => p.tools)
        .find((t) => t.name === 'bash')!.description;
    };
    expect(await described()).to.include(
      'the filesystem is read-only except the workspace (but .rousseau), the temp directory.',
    );
    configure({ sandbox: 'bwrap' });
    expect(await described()).to.include(
      'Sandbox (bubblewrap): the command sees only its own processes; the filesystem is not restricted.',
    );
    const refused = await chooseSandbox(
      { sandbox: 'bwrap', filesystem: 'workspace', network: true, writable: [], readOnly: ['../up'] },
      tmp.dir,
    ).catch((error: Error) => error.message);
    expect(refused).to.equal('readOnly "../up" is not in the workspace: name a path relative to it');
  });

  it('bwrap, filesystem "workspace": the workspace, the temp directory and `writable` are writable, the rest read-only; network: false leaves loopback only', async () => {
    mkdirSync(join(tmp.dir, 'sub'));
    // Outside the temp directory, which is writable anyway: a directory of the checkout's, removed after.
    const extra = join(ROOT, `.rh-sandbox-${process.pid}`);
    mkdirSync(extra);
    try {
      configure({ sandbox: 'bwrap', filesystem: 'workspace', network: false, writable: [extra] });
      const command = `echo hi > sub/f && cat sub/f; echo there > ${extra}/f && cat ${extra}/f; touch /etc/rh-sandbox-probe /usr/local/rh-sandbox-probe 2>&1 | grep -o "Read-only file system"; (exec 3<>/dev/tcp/192.0.2.1/80) 2>&1 | grep -o -m1 "Network is unreachable"`;
      const r = await callUnderShell(tmp.dir, { command });
      expect(JSON.parse(r.stdout).content, r.stderr).to.equal(
        'hi\nthere\nRead-only file system\nRead-only file system\nNetwork is unreachable\n[exit code 0]',
      );
    } finally {
      rmSync(extra, { recursive: true, force: true });
    }
  });

  it("bwrap by default: the filesystem is the user's (HOME writable, for npm, pip and git), the processes of the host out of sight", async () => {
    const home = join(ROOT, `.rh-home-${process.pid}`);
    mkdirSync(home);
    try {
      configure({ sandbox: 'bwrap' });
      const r = await callUnderShell(
        tmp.dir,
        { command: `echo cached > ${home}/npm-cache && cat ${home}/npm-cache; ${PROBE}` },
        { HOME: home },
      );
      const content = JSON.parse(r.stdout).content as string;
      expect(content, r.stderr).to.match(/^cached\n/);
      expect(content).to.not.contain(SECRET);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('filesystem "workspace" without bubblewrap is refused, naming what it needs', async () => {
    configure({ sandbox: 'unshare', filesystem: 'workspace' });
    const r = await runCli(['call', 'bash', '{"command":"true"}', '--json'], { cwd: tmp.dir });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('filesystem: \\"workspace\\" needs bubblewrap, and sandbox is \\"unshare\\"');
  });

  it('a sandbox named explicitly that cannot start fails the plugin with a clear error', async () => {
    configure({ sandbox: 'bwrap', filesystem: 'workspace', writable: ['/nonexistent-and-fine'] });
    const ok = await callUnderShell(tmp.dir, { command: 'true' });
    expect(ok.code, ok.stderr).to.equal(0); // a missing writable path is skipped
    const r = await new Promise<Called>((resolve) => {
      const child = spawn(process.execPath, [BIN, 'call', 'bash', '{"command":"true"}', '--json'], {
        cwd: tmp.dir,
        env: { ...process.env, PATH: '/nonexistent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/setup\(\) threw: sandbox \\"bwrap\\" does not work here: bwrap: not found/);
  });

  it('the sandbox is tried without blocking: the host runs other work while the trial runs', async () => {
    // A bwrap that takes a while and works: the trial must leave the event loop free meanwhile.
    const bin = join(tmp.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'bwrap'), '#!/bin/sh\nsleep 0.5\n');
    chmodSync(join(bin, 'bwrap'), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `${bin}:/usr/bin:/bin`;
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    try {
      // filesystem "workspace" puts the workspace in the argv: a trial of its own, never one cached by another test.
      const sandbox = await chooseSandbox(
        { sandbox: 'bwrap', filesystem: 'workspace', network: true, writable: [], readOnly: [] },
        join(tmp.dir, 'bin'),
      );
      expect(sandbox.kind).to.equal('bwrap');
      expect(ticks).to.be.greaterThan(0);
    } finally {
      clearInterval(ticker);
      process.env.PATH = path;
    }
  });

  it('a trial that hangs fails within its time (even if what it started ignores SIGTERM and holds the pipes), and is tried again at the next load', async () => {
    // The sandbox prefix ignores SIGTERM; this bwrap also leaves a process behind holding stderr and fd 3.
    // "auto" then falls back to unshare, which works here: the host must not wait on bwrap for ever.
    const bin = join(tmp.dir, 'hung-bin');
    mkdirSync(bin);
    const pids = join(tmp.dir, 'hung-pids');
    writeFileSync(join(bin, 'bwrap'), `#!/bin/sh\nsleep 60 & echo $! $$ > ${pids}\nexec sleep 60\n`);
    chmodSync(join(bin, 'bwrap'), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `${bin}:/usr/bin:/bin`;
    try {
      // network: false puts the unshare fallback's argv apart from the other tests' (a trial of its own).
      const sandbox = await chooseSandbox(
        { sandbox: 'auto', filesystem: 'open', network: false, writable: [], readOnly: [] },
        tmp.dir,
      );
      expect(sandbox.kind).to.equal('unshare');
      const alive = readFileSync(pids, 'utf8')
        .trim()
        .split(' ')
        // Running, not a zombie its new parent has yet to reap.
        .filter((pid) => existsSync(`/proc/${pid}/stat`) && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')));
      expect(alive, 'the trial left processes running').to.deep.equal([]);
      // The failure is not kept: once bwrap works, the next load (a reload) uses it.
      process.env.PATH = path;
      const again = await chooseSandbox(
        { sandbox: 'auto', filesystem: 'open', network: false, writable: [], readOnly: [] },
        tmp.dir,
      );
      expect(again.kind).to.equal('bwrap');
    } finally {
      process.env.PATH = path;
    }
  });

  it('a host closed while the sandbox is tried leaves no exit listener behind: setup ends with the abort', async () => {
    const plugin = (await loadPluginModule<{ default: Plugin }>('plugins/shell/index.ts')).default;
    const lifetime = new AbortController();
    const before = process.listenerCount('exit');
    const setup = plugin.setup!({
      options: { sandbox: 'unshare' },
      log: toolContext('/').log,
      workspace: tmp.dir,
      signal: lifetime.signal,
    });
    lifetime.abort(); // during the trial (or its cached answer): the host closed
    let threw = false;
    try {
      await setup;
    } catch {
      threw = true;
    }
    expect(threw, 'setup returned tools for a host that had closed').to.equal(true);
    expect(process.listenerCount('exit')).to.equal(before);
  });
});
