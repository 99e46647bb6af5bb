import { execFile, execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { node22 } from '../../scripts/node22.ts';
import { FIXTURES, type TempDir, tempDirPerTest } from '../helpers.ts';

const SCRIPT = join(FIXTURES, 'stripped-cache', 'load.mjs');

interface Loaded {
  status: string;
  loader?: string;
  error?: string;
  said?: string;
}

const plugin = (name: string, body: string, extra = '') => `import Type from 'typebox';
import { definePlugin, defineTool } from 'rousseau-host';
${extra}
export default definePlugin({ name: '${name}', version: '1.0.0', tools: [defineTool({
  name: '${name}_say',
  description: 'Answers what the test asks of ${name}.',
  inputSchema: Type.Object({}, { additionalProperties: false }),
  annotations: { readOnly: true },
  async execute() { ${body} },
})] });
`;

/** The cache file the host keeps for a TypeScript file whose text is `source`. */
const entry = (cache: string, source: string) =>
  join(cache, readdirSync(cache)[0]!, `${createHash('sha256').update(source).digest('hex')}.js`);

/** A module saying `word`, as long as `source` (lines ending in `end`): stripped text is, so only such a file is served. */
const sameLength = (source: string, word: string, end = '\n') =>
  `${`export const word = '${word}';`.padEnd(source.length - end.length)}${end}`;

describe('Node 22: TypeScript stripped once, kept by the hash of its text', function () {
  const tmp = tempDirPerTest();

  this.timeout(120_000); // the first run may install node@22 from npm's cache

  let node: string;
  before(() => {
    node = node22();
  });

  function load(dir: string, env: NodeJS.ProcessEnv, ...files: string[]): Record<string, Loaded> {
    const { stdout, stderr, status } = spawnSync(node, [SCRIPT, dir, ...files], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000, // a load that hangs fails the test instead of holding mocha's thread for ever
      env: { ...process.env, ...env },
    });
    expect(stderr).to.equal('');
    expect(status).to.equal(0);
    return JSON.parse(stdout) as Record<string, Loaded>;
  }

  /** A plugin folder whose plain.ts says the `word` its helper.ts exports; the helper's text. */
  function wordPlugin(tmp: TempDir, word: string): string {
    const helper = `export const word: string = '${word}';\n`;
    tmp.write('package.json', '{ "name": "plugins", "type": "module" }');
    tmp.write('helper.ts', helper);
    tmp.write('plain.ts', plugin('plain', 'return word;', "import { word } from './helper.ts';"));
    return helper;
  }

  /** What plain.ts in `dir` says, its stripped text kept in `cache`. */
  const said = (dir: string, cache: string, env: NodeJS.ProcessEnv = {}) =>
    load(dir, { RH_CACHE_DIR: cache, ...env }, 'plain.ts')['plain.ts']!.said;

  it("serves a file's kept text until the file changes, through Node's own loader", () => {
    const cache = join(tmp.dir, 'cache');
    const helper = wordPlugin(tmp, 'before');
    const first = load(tmp.dir, { RH_CACHE_DIR: cache }, 'plain.ts');
    expect(first['plain.ts']).to.deep.equal({ status: 'loaded', loader: 'native', said: 'before' });
    // One entry per TypeScript module, the plugin and its import; stripped in place, so each keeps
    // its length (lines and columns unchanged) and loses its types.
    const kept = readFileSync(entry(cache, helper), 'utf8');
    expect(kept).to.have.length(helper.length);
    expect(kept).to.match(/^export const word\s+= 'before';/);
    expect(readdirSync(join(cache, readdirSync(cache)[0]!))).to.have.length(2);

    // What the cache holds is what runs: written there by its owner, it is served as it is...
    writeFileSync(entry(cache, helper), sameLength(helper, 'from the cache'));
    expect(said(tmp.dir, cache)).to.equal('from the cache');
    // ...and an edited file has a new hash, so it is stripped again, never served stale.
    tmp.write('helper.ts', `export const word: string = 'after';\n`);
    expect(said(tmp.dir, cache)).to.equal('after');
    // RH_CACHE_DIR=false: no cache read (nor written).
    const after = `export const word: string = 'after';\n`;
    writeFileSync(entry(cache, after), sameLength(after, 'stale'));
    expect(said(tmp.dir, 'false')).to.equal('after');
  });

  it('turns the cache off where another user could write to it, or through a symlink', () => {
    const helper = wordPlugin(tmp, 'real');
    const cache = join(tmp.dir, 'cache');
    load(tmp.dir, { RH_CACHE_DIR: cache }, 'plain.ts');
    writeFileSync(entry(cache, helper), sameLength(helper, 'planted'));
    const versionDir = join(cache, readdirSync(cache)[0]!);

    chmodSync(versionDir, 0o777);
    expect(said(tmp.dir, cache)).to.equal('real');
    chmodSync(versionDir, 0o700);
    chmodSync(cache, 0o757); // the root too: whoever can write there could swap the directory in it
    expect(said(tmp.dir, cache)).to.equal('real');
    chmodSync(cache, 0o700);
    expect(said(tmp.dir, cache)).to.equal('planted');

    const link = join(tmp.dir, 'link');
    symlinkSync(cache, link);
    expect(said(tmp.dir, link)).to.equal('real');
    // Unset, the cache is the user's ($XDG_CACHE_HOME), not the workspace; what it makes no one
    // else can read, whatever the umask (the child's is this process's).
    const xdg = join(tmp.dir, 'xdg');
    const umask = process.umask(0);
    try {
      load(tmp.dir, { RH_CACHE_DIR: '', XDG_CACHE_HOME: xdg }, 'plain.ts');
    } finally {
      process.umask(umask);
    }
    const made = join(xdg, 'rousseau-host', readdirSync(cache)[0]!);
    expect(readdirSync(join(xdg, 'rousseau-host'))).to.deep.equal([basename(made)]);
    const modes = [xdg, dirname(made), made, ...readdirSync(made).map((name) => join(made, name))];
    expect(modes.map((path) => (statSync(path).mode & 0o777).toString(8))).to.deep.equal([
      '700',
      '700',
      '700',
      '600',
      '600',
    ]);
  });

  it('keeps a throw at its line, and leaves what stripping refuses to jiti, with nothing kept', () => {
    const cache = join(tmp.dir, 'cache');
    tmp.write('package.json', '{ "name": "plugins", "type": "module" }');
    tmp.write('throws.ts', `const a: number = 1;\ntype T = { b: string };\nthrow new Error('at import ' + a);\n`);
    tmp.write('enum.ts', plugin('enum', 'return Color[Color.Red];', 'enum Color { Red, Green }'));
    for (const run of ['stripped now', 'from the cache']) {
      const out = load(tmp.dir, { RH_CACHE_DIR: cache }, 'throws.ts', 'enum.ts');
      expect(out['throws.ts']!.status, run).to.equal('failed');
      expect(out['throws.ts']!.error, run).to.include(`${join(tmp.dir, 'throws.ts')}:3:7`);
      expect(out['enum.ts'], run).to.deep.equal({ status: 'loaded', loader: 'jiti', said: 'Red' });
    }
    expect(readdirSync(join(cache, readdirSync(cache)[0]!))).to.have.length(1); // throws.ts only
  });

  it('serves only a whole file of the owner, under directories no other user could swap', () => {
    const helper = wordPlugin(tmp, 'real');
    const shared = join(tmp.dir, 'shared');
    mkdirSync(shared, { mode: 0o700 });
    const cache = join(shared, 'cache');
    said(tmp.dir, cache);
    const kept = entry(cache, helper);
    writeFileSync(kept, sameLength(helper, 'planted'));
    expect(said(tmp.dir, cache)).to.equal('planted');

    // A directory above the cache that others can write to: they could rename the cache away and
    // put their own in its place, after the host looked at it. Sticky (as /tmp is), they cannot.
    chmodSync(shared, 0o777);
    expect(said(tmp.dir, cache)).to.equal('real');
    chmodSync(shared, 0o1777);
    expect(said(tmp.dir, cache)).to.equal('planted');
    chmodSync(shared, 0o700);
    // A symlink above the cache is followed once, and the directories it leads to are checked;
    // so is the folder it sits in, where whoever can write could point it elsewhere.
    const open = join(tmp.dir, 'open');
    mkdirSync(open);
    symlinkSync(shared, join(open, 'alias'));
    expect(said(tmp.dir, join(open, 'alias', 'cache'))).to.equal('planted');
    chmodSync(open, 0o777);
    expect(said(tmp.dir, join(open, 'alias', 'cache'))).to.equal('real');

    // An entry others could write to, or a symlink, is not served: stripped again and written over.
    chmodSync(kept, 0o646);
    expect(said(tmp.dir, cache)).to.equal('real');
    expect(statSync(kept).mode & 0o777).to.equal(0o600);
    writeFileSync(kept, sameLength(helper, 'planted'));
    const elsewhere = tmp.write('elsewhere.js', sameLength(helper, 'planted'));
    rmSync(kept);
    symlinkSync(elsewhere, kept);
    expect(said(tmp.dir, cache)).to.equal('real');
    // A file cut short (a crash before the disk had it all) is not the stripped text either.
    truncateSync(kept, 12);
    expect(said(tmp.dir, cache)).to.equal('real');
    expect(readFileSync(kept, 'utf8')).to.have.length(helper.length);
    // A FIFO (opened without a writer, it would hold the load forever) or a directory where the
    // entry should be: the plugin loads all the same.
    rmSync(kept);
    execFileSync('mkfifo', [kept]);
    expect(said(tmp.dir, cache)).to.equal('real');
    rmSync(kept);
    mkdirSync(kept);
    expect(said(tmp.dir, cache)).to.equal('real');
  });

  it('keys a file by its bytes, a BOM and CRLF line ends kept as they are', () => {
    const cache = join(tmp.dir, 'cache');
    wordPlugin(tmp, 'real');
    // The stripper drops a leading BOM, as Node's loader does before stripping: one byte shorter.
    const helper = `\uFEFFexport const word: string = 'bom';\r\n`;
    tmp.write('helper.ts', helper);
    expect(said(tmp.dir, cache)).to.equal('bom');
    const kept = readFileSync(entry(cache, helper), 'utf8');
    expect(kept).to.have.length(helper.length - 1);
    expect(kept).to.match(/^export const word\s+= 'bom';\r\n$/);
    writeFileSync(entry(cache, helper), sameLength(kept, 'planted', '\r\n'));
    expect(said(tmp.dir, cache)).to.equal('planted');
  });

  it('is off where the path to it is relative: the workspace, whose files the user did not write', () => {
    // A cloned repository's files are the user's: a kept file it ships would pass every check.
    const helper = wordPlugin(tmp, 'real');
    const shipped = join(tmp.dir, '.cache', 'rousseau-host');
    said(tmp.dir, shipped);
    writeFileSync(entry(shipped, helper), sameLength(helper, 'planted'));
    expect(said(tmp.dir, shipped)).to.equal('planted');
    const relative = [
      { RH_CACHE_DIR: '.cache/rousseau-host' },
      { RH_CACHE_DIR: '', XDG_CACHE_HOME: '.cache' },
      { RH_CACHE_DIR: '', XDG_CACHE_HOME: '', HOME: '.' },
    ];
    for (const env of relative) expect(said(tmp.dir, '', env), JSON.stringify(env)).to.equal('real');
  });

  it('is off where Node transforms TypeScript, however NODE_OPTIONS says so', () => {
    const cache = join(tmp.dir, 'cache');
    const helper = wordPlugin(tmp, 'real');
    load(tmp.dir, { RH_CACHE_DIR: cache }, 'plain.ts');
    writeFileSync(entry(cache, helper), sameLength(helper, 'planted'));
    for (const options of ['"--experimental-transform-types"', '--experimental-transform-types=true']) {
      expect(said(tmp.dir, cache, { NODE_OPTIONS: `--no-warnings ${options}` }), options).to.equal('real');
    }
  });

  it('leaves TypeScript under node_modules to Node, which refuses it, as without the cache', () => {
    const cache = join(tmp.dir, 'cache');
    tmp.write('package.json', '{ "name": "plugins", "type": "module" }');
    tmp.write('node_modules/dep/package.json', '{ "name": "dep", "type": "module", "exports": "./index.ts" }');
    tmp.write('node_modules/dep/index.ts', `export const word: string = 'dep';\n`);
    tmp.write('node_modules/dep/linked.ts', plugin('linked', "return 'linked';"));
    tmp.write('uses.ts', plugin('uses', 'return word;', "import { word } from 'dep';"));
    // A symlinked plugin: Node imports the file it leads to, under node_modules.
    symlinkSync(join(tmp.dir, 'node_modules/dep/linked.ts'), join(tmp.dir, 'linked.ts'));
    for (const env of [{ RH_CACHE_DIR: 'false' }, { RH_CACHE_DIR: cache }]) {
      const out = load(tmp.dir, env, 'uses.ts', 'linked.ts');
      expect(out['uses.ts'], env.RH_CACHE_DIR).to.deep.equal({ status: 'loaded', loader: 'jiti', said: 'dep' });
      expect(out['linked.ts'], env.RH_CACHE_DIR).to.deep.equal({ status: 'loaded', loader: 'jiti', said: 'linked' });
    }
    expect(readdirSync(join(cache, readdirSync(cache)[0]!))).to.have.length(1); // uses.ts only
  });

  it('serves whole files to hosts that start at the same moment on an empty cache', async () => {
    const cache = join(tmp.dir, 'cache');
    tmp.write('package.json', '{ "name": "plugins", "type": "module" }');
    const sources = Array.from({ length: 20 }, (_, i) => plugin(`p${i}`, `return 'p${i}';`));
    const files = sources.map((source, i) => basename(tmp.write(`p${i}.ts`, source)));
    const run = promisify(execFile);
    const env = { ...process.env, RH_CACHE_DIR: cache };
    const starts = [0, 1, 2].map(() => run(node, [SCRIPT, tmp.dir, ...files], { cwd: tmp.dir, env, timeout: 60_000 }));
    for (const { stdout, stderr } of await Promise.all(starts)) {
      expect(stderr).to.equal('');
      const out = JSON.parse(stdout) as Record<string, Loaded>;
      for (const [i, file] of files.entries())
        expect(out[file]).to.deep.equal({ status: 'loaded', loader: 'native', said: `p${i}` });
    }
    // One whole file per plugin, and no write of one left behind.
    expect(readdirSync(join(cache, readdirSync(cache)[0]!))).to.have.length(20);
    for (const source of sources) expect(readFileSync(entry(cache, source), 'utf8')).to.have.length(source.length);
  });

  it('keeps at most 1,000 files, the latest written, and drops Node versions unused for 30 days', () => {
    const cache = join(tmp.dir, 'cache');
    tmp.write('package.json', '{ "name": "plugins", "type": "module" }');
    tmp.write('plain.ts', plugin('plain', "return 'first';"));
    load(tmp.dir, { RH_CACHE_DIR: cache }, 'plain.ts');
    const version = readdirSync(cache)[0]!;
    const dir = join(cache, version);
    const day = 86_400;
    const now = Date.now() / 1000;
    const old = (path: string, days: number) => utimesSync(path, now - days * day, now - days * day);
    const fake = (i: number) => join(dir, `${createHash('sha256').update(String(i)).digest('hex')}.js`);
    for (let i = 0; i < 1000; i++) {
      writeFileSync(fake(i), 'export {};\n', { mode: 0o600 });
      old(fake(i), 1000 - i); // fake(0) the oldest
    }
    writeFileSync(`${fake(0)}.123-0`, 'export', { mode: 0o600 }); // a write cut short by a crash
    old(`${fake(0)}.123-0`, 2000);
    writeFileSync(join(dir, 'notes.txt'), 'not the cache’s');
    old(join(dir, 'notes.txt'), 2000);
    // Another Node version's folder: unused for 31 days it goes, for 29 it stays; one that holds a
    // file the cache did not write keeps that file and stays; a folder of the user's whose name only
    // looks like one (RH_CACHE_DIR may be a folder that holds other things) is left alone.
    const kept = `${createHash('sha256').update('kept').digest('hex')}.js`;
    for (const [name, days, other] of [
      ['ts-v22.0.0', 31, undefined],
      ['ts-v22.1.0', 29, undefined],
      ['ts-v22.2.0', 31, 'notes.txt'],
      ['ts-validator', 100, 'index.ts'],
    ] as const) {
      mkdirSync(join(cache, name), { mode: 0o700 });
      writeFileSync(join(cache, name, kept), 'export {};\n', { mode: 0o600 });
      if (other) writeFileSync(join(cache, name, other), 'the user’s', { mode: 0o600 });
      old(join(cache, name), days);
    }
    mkdirSync(join(cache, 'mine'));
    old(join(cache, 'mine'), 100);

    tmp.write('plain.ts', plugin('plain', "return 'second';")); // edited: a new entry
    expect(said(tmp.dir, cache)).to.equal('second');
    const left = readdirSync(dir);
    expect(left.filter((name) => name.endsWith('.js'))).to.have.length(751);
    expect(left).to.include.members([`${fake(999).slice(dir.length + 1)}`, 'notes.txt']);
    expect(left).to.not.include.members([`${fake(0).slice(dir.length + 1)}`, `${fake(0).slice(dir.length + 1)}.123-0`]);
    expect(readdirSync(cache).sort()).to.deep.equal(
      ['mine', 'ts-v22.1.0', 'ts-v22.2.0', 'ts-validator', version].sort(),
    );
    expect(readdirSync(join(cache, 'ts-v22.2.0'))).to.deep.equal(['notes.txt']);
    expect(readdirSync(join(cache, 'ts-validator')).sort()).to.deep.equal(['index.ts', kept].sort());
  });
});
