import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { expect } from 'chai';
import { node22 } from '../../scripts/node22.ts';
import { FIXTURES, tempDir } from '../helpers.ts';

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

describe('Node 22: TypeScript stripped once, kept by the hash of its text', function () {
  this.timeout(120_000); // the first run may install node@22 from npm's cache

  let node: string;
  before(() => {
    node = node22();
  });

  function load(dir: string, env: NodeJS.ProcessEnv, ...files: string[]): Record<string, Loaded> {
    const { stdout, stderr, status } = spawnSync(node, [SCRIPT, dir, ...files], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });
    expect(stderr).to.equal('');
    expect(status).to.equal(0);
    return JSON.parse(stdout) as Record<string, Loaded>;
  }

  it("serves a file's kept text until the file changes, through Node's own loader", () => {
    const tmp = tempDir();
    try {
      const cache = join(tmp.dir, 'cache');
      const helper = `export const word: string = 'before';\n`;
      tmp.write('package.json', '{ "name": "plugins", "type": "module" }');
      tmp.write('helper.ts', helper);
      tmp.write('plain.ts', plugin('plain', 'return word;', "import { word } from './helper.ts';"));
      const first = load(tmp.dir, { RH_TS_CACHE: cache }, 'plain.ts');
      expect(first['plain.ts']).to.deep.equal({ status: 'loaded', loader: 'native', said: 'before' });
      // One entry per TypeScript module, the plugin and its import; stripped in place, so each keeps
      // its length (lines and columns unchanged) and loses its types.
      const kept = readFileSync(entry(cache, helper), 'utf8');
      expect(kept).to.have.length(helper.length);
      expect(kept).to.match(/^export const word\s+= 'before';/);
      expect(readdirSync(join(cache, readdirSync(cache)[0]!))).to.have.length(2);

      // What the cache holds is what runs: written there by its owner, it is served as it is...
      writeFileSync(entry(cache, helper), `export const word = 'from the cache';\n`);
      expect(load(tmp.dir, { RH_TS_CACHE: cache }, 'plain.ts')['plain.ts']!.said).to.equal('from the cache');
      // ...and an edited file has a new hash, so it is stripped again, never served stale.
      tmp.write('helper.ts', `export const word: string = 'after';\n`);
      expect(load(tmp.dir, { RH_TS_CACHE: cache }, 'plain.ts')['plain.ts']!.said).to.equal('after');
      // RH_TS_CACHE=false: no cache read (nor written).
      writeFileSync(entry(cache, `export const word: string = 'after';\n`), `export const word = 'stale';\n`);
      expect(load(tmp.dir, { RH_TS_CACHE: 'false' }, 'plain.ts')['plain.ts']!.said).to.equal('after');
    } finally {
      tmp.cleanup();
    }
  });

  it('turns the cache off where another user could write to it, or through a symlink', () => {
    const tmp = tempDir();
    try {
      const helper = `export const word: string = 'real';\n`;
      tmp.write('package.json', '{ "name": "plugins", "type": "module" }');
      tmp.write('helper.ts', helper);
      tmp.write('plain.ts', plugin('plain', 'return word;', "import { word } from './helper.ts';"));
      const cache = join(tmp.dir, 'cache');
      load(tmp.dir, { RH_TS_CACHE: cache }, 'plain.ts');
      writeFileSync(entry(cache, helper), `export const word = 'planted';\n`);
      const versionDir = join(cache, readdirSync(cache)[0]!);

      chmodSync(versionDir, 0o777);
      expect(load(tmp.dir, { RH_TS_CACHE: cache }, 'plain.ts')['plain.ts']!.said).to.equal('real');
      chmodSync(versionDir, 0o700);
      chmodSync(cache, 0o757); // the root too: whoever can write there could swap the directory in it
      expect(load(tmp.dir, { RH_TS_CACHE: cache }, 'plain.ts')['plain.ts']!.said).to.equal('real');
      chmodSync(cache, 0o700);
      expect(load(tmp.dir, { RH_TS_CACHE: cache }, 'plain.ts')['plain.ts']!.said).to.equal('planted');

      const link = join(tmp.dir, 'link');
      symlinkSync(cache, link);
      expect(load(tmp.dir, { RH_TS_CACHE: link }, 'plain.ts')['plain.ts']!.said).to.equal('real');
      // Unset, the cache is the user's ($XDG_CACHE_HOME), not the workspace.
      const xdg = join(tmp.dir, 'xdg');
      mkdirSync(xdg);
      load(tmp.dir, { RH_TS_CACHE: '', XDG_CACHE_HOME: xdg }, 'plain.ts');
      expect(readdirSync(join(xdg, 'rousseau-host'))).to.deep.equal([readdirSync(cache)[0]]);
    } finally {
      tmp.cleanup();
    }
  });

  it('keeps a throw at its line, and leaves what stripping refuses to jiti, with nothing kept', () => {
    const tmp = tempDir();
    try {
      const cache = join(tmp.dir, 'cache');
      tmp.write('package.json', '{ "name": "plugins", "type": "module" }');
      tmp.write('throws.ts', `const a: number = 1;\ntype T = { b: string };\nthrow new Error('at import ' + a);\n`);
      tmp.write('enum.ts', plugin('enum', 'return Color[Color.Red];', 'enum Color { Red, Green }'));
      for (const run of ['stripped now', 'from the cache']) {
        const out = load(tmp.dir, { RH_TS_CACHE: cache }, 'throws.ts', 'enum.ts');
        expect(out['throws.ts']!.status, run).to.equal('failed');
        expect(out['throws.ts']!.error, run).to.include(`${join(tmp.dir, 'throws.ts')}:3:7`);
        expect(out['enum.ts'], run).to.deep.equal({ status: 'loaded', loader: 'jiti', said: 'Red' });
      }
      expect(readdirSync(join(cache, readdirSync(cache)[0]!))).to.have.length(1); // throws.ts only
    } finally {
      tmp.cleanup();
    }
  });
});
