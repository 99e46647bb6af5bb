// create-rousseau-tool as a user runs it (a real process, real temp dirs): what it writes, how it
// names things, what it refuses, what it tells the user to do next.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { ROOT, tempDir } from '../helpers.ts';
import { SCAFFOLDER, scaffold } from './helpers.ts';

const TEMPLATE = join(ROOT, 'plugin-template');

/** Every file under `dir`, relative, sorted; node_modules and the like are not part of a template. */
function filesOf(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d)) {
      if (['node_modules', '.rousseau', 'package-lock.json'].includes(entry)) continue;
      const path = join(d, entry);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(dir, path));
    }
  };
  walk(dir);
  return out.sort();
}

// biome-ignore lint/suspicious/noExplicitAny: a manifest read to assert on, field by field
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;

describe('create-rousseau-tool', function () {
  this.timeout(60_000); // each test runs the scaffolder, and through it npm, for real: slow on a busy machine
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir('rh-create-')));
  afterEach(() => tmp.cleanup());

  it('copies the template, renames _gitignore, and names the package and its README', async () => {
    const r = await scaffold(['weather', '--description', 'Weather for agents.'], tmp.dir, { lookUp: true });
    expect(r.code, r.stderr).to.equal(0);
    const dir = join(tmp.dir, 'weather');
    const expected = filesOf(TEMPLATE)
      .map((f) => (f === '_gitignore' ? '.gitignore' : f))
      .sort();
    expect(filesOf(dir)).to.deep.equal(expected);

    const pkg = readJson(join(dir, 'package.json'));
    expect(pkg).to.include({
      name: 'rousseau-plugin-weather',
      version: '0.1.0',
      description: 'Weather for agents.',
      type: 'module',
    });
    expect(pkg).not.to.have.property('private');
    expect(pkg.keywords).to.include.members(['rousseau', 'rousseau-plugin']);
    expect(pkg.peerDependencies['rousseau-host']).to.match(/^\^\d/);
    // Offline the registry cannot say it has the host: the plugin's tests install this repo instead.
    expect(pkg.devDependencies['rousseau-host']).to.equal(`file:${resolve(ROOT)}`);
    expect(r.stdout).to.include(`rousseau-host for its tests: the repo this scaffolder runs from, ${resolve(ROOT)}`);
    // The same host for the agent's project, before any npx rousseau-host there.
    expect(r.stdout)
      .to.match(/in your agent's project.*:\n/)
      .and.include(`\n  npm install ${resolve(ROOT)}\n`);
    expect(pkg.scripts.pretest).to.equal('rousseau-host check .');
    // tsx's esbuild has an install script that npm 11 asks about at every install; tsx needs none of it.
    expect(pkg.allowScripts).to.deep.equal({ esbuild: false });
    // The new folder is inside the project the scaffolder ran in: `add` lists it by its path.
    expect(r.stdout).to.include('\n  npx rousseau-host add ./weather    (adds it to the config by its path)\n');

    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(readme).to.match(/^# rousseau-plugin-weather\n\nWeather for agents\.\n/);
    for (const file of filesOf(dir)) expect(readFileSync(join(dir, file), 'utf8'), file).not.to.include('{{');
  });

  it('makes package names the rousseau-plugin way, and keeps names that already are', async () => {
    const cases: [string, string][] = [
      ['Weather Now', 'rousseau-plugin-weather-now'],
      ['@acme/weather', '@acme/rousseau-plugin-weather'],
      ['rousseau-plugin-kept', 'rousseau-plugin-kept'],
      ['@acme/rousseau-plugin', '@acme/rousseau-plugin'],
    ];
    // Each run looks the host up on npm (about a second): four directories of their own, side by side.
    const runs = await Promise.all(cases.map(([given], i) => scaffold([`p${i}`, '--name', given, '--yes'], tmp.dir)));
    for (const [i, [, expected]] of cases.entries()) {
      expect(runs[i]!.code, runs[i]!.stderr).to.equal(0);
      expect(readJson(join(tmp.dir, `p${i}`, 'package.json')).name).to.equal(expected);
    }
  });

  it('refuses a non-empty directory without --force, and leaves it untouched', async () => {
    const mine = tmp.write('taken/notes.txt', 'mine');
    const refused = await scaffold(['taken'], tmp.dir);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include('is not empty').and.include('--force');
    expect(readdirSync(join(tmp.dir, 'taken'))).to.deep.equal(['notes.txt']);

    const forced = await scaffold(['taken', '--force'], tmp.dir);
    expect(forced.code, forced.stderr).to.equal(0);
    expect(readFileSync(mine, 'utf8')).to.equal('mine');
    expect(existsSync(join(tmp.dir, 'taken', 'src', 'index.ts'))).to.equal(true);
  });

  it('exits 2 on a usage error: no directory off a terminal, a name that cannot be a plugin, an unknown flag', async () => {
    const noDir = await scaffold([], tmp.dir);
    expect(noDir.code).to.equal(2);
    expect(noDir.stderr).to.include('npm create rousseau-tool my-tool');
    const badName = await scaffold(['x', '--name', '123'], tmp.dir);
    expect(badName.code).to.equal(2);
    expect(badName.stderr).to.include('plugin name');
    const badFlag = await scaffold(['x', '--template', 'react'], tmp.dir);
    expect(badFlag.code).to.equal(2);
    expect(readdirSync(tmp.dir)).to.deep.equal([]);
  });

  it('prints the next steps with the exact plugins line for the config it finds', async () => {
    tmp.write('package.json', '{"name":"my-agent","private":true}');
    tmp.write('rousseau.config.ts', 'export default { plugins: [] };\n');
    const r = await scaffold(["plugins/it's-mine", '--name', 'mine'], tmp.dir);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include("cd 'plugins/it'\\''s-mine'\n  npm install\n  npm test");
    expect(r.stdout).to.include('add it to the plugins in rousseau.config.ts');
    expect(r.stdout).to.include("  plugins: ['./plugins/it\\'s-mine'],");
    expect(r.stderr).to.equal(''); // nothing asked, nothing complained about
  });

  it('every path in the next steps works from where it is run: the way back from the plugin, the add from there', async () => {
    const r = await scaffold(['tools/weather', '--yes'], tmp.dir);
    expect(r.code, r.stderr).to.equal(0);
    const target = join(tmp.dir, 'tools', 'weather');
    const into = /^ {2}cd (\S+)$/m.exec(r.stdout)?.[1];
    expect(into, r.stdout).to.equal('tools/weather');
    // The tests ran inside the plugin: the agent's steps start with the way back to where the user was.
    const back = /back here: cd (\S+)\)/.exec(r.stdout)?.[1];
    expect(back, r.stdout).to.be.a('string');
    expect(resolve(target, back!)).to.equal(tmp.dir);
    const added = /npx rousseau-host add (\S+)/.exec(r.stdout)?.[1];
    expect(existsSync(join(resolve(tmp.dir, added!), 'package.json')), added).to.equal(true);
    const listed = /plugins: \['([^']+)'\]/.exec(r.stdout)?.[1];
    expect(resolve(tmp.dir, listed!)).to.equal(target);
  });

  it('asks for what the flags leave out when it runs on a terminal', async () => {
    // `script` gives the scaffolder a real pseudo-terminal; the answers are typed into it.
    const child = spawn('script', ['-qfec', `exec "${process.execPath}" "${SCAFFOLDER}"`, '/dev/null'], {
      cwd: tmp.dir,
      env: { ...process.env, NO_COLOR: '1' },
    });
    let screen = '';
    let unread = ''; // what the terminal showed after the last expected text, escape codes removed
    // What the terminal shows, and what is typed in reply (nothing when it is not a question).
    const dialogue: { expect: string; type?: string }[] = [
      { expect: 'Directory for the new plugin (my-tool): ', type: 'tty-tool' },
      { expect: 'Package name (rousseau-plugin-tty-tool): ', type: '123' },
      { expect: '"123" cannot be a plugin package name' },
      { expect: 'Package name (rousseau-plugin-tty-tool): ', type: '' }, // asked again, the suggestion kept
      { expect: 'Description (Tools for rousseau-host.): ', type: 'Typed in.' },
    ];
    child.stdout.on('data', (d: Buffer) => {
      screen += d.toString();
      unread += stripVTControlCharacters(d.toString());
      for (let next = dialogue[0]; next; next = dialogue[0]) {
        const at = unread.indexOf(next.expect);
        if (at < 0) break;
        unread = unread.slice(at + next.expect.length);
        dialogue.shift();
        if (next.type !== undefined) child.stdin.write(`${next.type}\r`);
      }
    });
    const stuck = setTimeout(() => child.kill('SIGKILL'), 15_000); // a prompt that never came: end it, show the screen
    const code = await new Promise((resolve) => child.on('close', resolve));
    clearTimeout(stuck);
    expect(code, screen).to.equal(0);
    expect(dialogue, screen).to.deep.equal([]);
    expect(readJson(join(tmp.dir, 'tty-tool', 'package.json'))).to.include({
      name: 'rousseau-plugin-tty-tool',
      description: 'Typed in.',
    });
  });
});
