import { expect } from 'chai';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadPluginModule } from '../load.ts';
import { textOf, toolContext } from '../tool-context.ts';
import { makeWorkspace, startSwapping, type Layout } from './fixture.ts';

type FsTools = typeof import('../../../plugins/fs/grep.ts') &
  typeof import('../../../plugins/fs/glob.ts') &
  typeof import('../../../plugins/fs/ls.ts');

describe('plugins/fs grep, glob and ls', () => {
  let tools: FsTools;
  let ws: Layout;
  before(async () => {
    tools = {
      ...(await loadPluginModule<typeof import('../../../plugins/fs/grep.ts')>('plugins/fs/grep.ts')),
      ...(await loadPluginModule<typeof import('../../../plugins/fs/glob.ts')>('plugins/fs/glob.ts')),
      ...(await loadPluginModule<typeof import('../../../plugins/fs/ls.ts')>('plugins/fs/ls.ts')),
    };
  });
  beforeEach(() => {
    ws = makeWorkspace();
    const put = (rel: string, content: string | Buffer) => {
      mkdirSync(join(ws.root, rel, '..'), { recursive: true });
      writeFileSync(join(ws.root, rel), content);
    };
    put('src/main.ts', 'export function main() {\n  return Needle;\n}\n');
    put('src/util/helper.ts', 'const needle = 1;\n');
    put('src/style.css', 'needle { }\n');
    put('node_modules/dep/index.js', 'needle in node_modules\n');
    put('.git/objects/needle', 'needle in git\n');
    put('.rousseau/audit.jsonl', '{"input":"{\\"pattern\\":\\"needle\\"}"}\n');
    put('image.bin', Buffer.from([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x00, 0x01]));
    symlinkSync(join(ws.outside, 'secret.txt'), join(ws.root, 'src', 'abs-link'));
  });
  afterEach(() => ws.cleanup());

  const grep = async (input: Record<string, unknown>, options: Record<string, unknown> = {}) =>
    textOf(await tools.grepTool.execute(input as never, toolContext(ws.root, options)));
  const glob = async (input: Record<string, unknown>, options: Record<string, unknown> = {}) =>
    textOf(await tools.globTool.execute(input as never, toolContext(ws.root, options)));
  const failure = (p: unknown) =>
    Promise.resolve(p).then(
      () => expect.fail('expected a failure'),
      (e: Error & { code?: string }) => e,
    );

  describe('grep', () => {
    it('returns path:line: text rows, skipping .git, node_modules, .rousseau and binaries, and says what it skipped', async () => {
      const text = await grep({ pattern: 'needle' });
      expect(text.split('\n')).to.deep.equal([
        'src/style.css:1: needle { }',
        'src/util/helper.ts:1: const needle = 1;',
        '(skipped 1 binary file and 0 files over 4194304 bytes)',
      ]);
    });

    it('matches case-insensitively on request', async () => {
      expect(await grep({ pattern: 'needle', ignore_case: true, path: 'src' })).to.include(
        'src/main.ts:2:   return Needle;',
      );
    });

    it('filters by an include glob on names or on paths', async () => {
      expect(await grep({ pattern: 'needle', include: '*.ts', ignore_case: true })).to.equal(
        'src/main.ts:2:   return Needle;\nsrc/util/helper.ts:1: const needle = 1;',
      );
      expect(await grep({ pattern: 'needle', include: 'util/**/*.ts', path: 'src' })).to.equal(
        'src/util/helper.ts:1: const needle = 1;',
      );
      expect(await grep({ pattern: 'needle', include: '*.{css,js}' })).to.equal('src/style.css:1: needle { }');
    });

    it('searches one file when path is a file', async () => {
      expect(await grep({ pattern: 'return', path: 'src/main.ts' })).to.equal('src/main.ts:2:   return Needle;');
    });

    it('stops at the match cap with a marker', async () => {
      writeFileSync(join(ws.root, 'many.txt'), 'hit\n'.repeat(50));
      const text = await grep({ pattern: '^hit$', path: 'many.txt' }, { maxResults: 5 });
      const rows = text.split('\n');
      expect(rows).to.have.length(6);
      expect(rows[5]).to.equal('[… stopped at 5 matches; narrow the pattern, path or include to see the rest]');
    });

    it('skips files over the size cap and counts them', async () => {
      writeFileSync(join(ws.root, 'huge.txt'), `needle\n${'z'.repeat(5000)}`);
      expect(await grep({ pattern: 'needle', include: 'huge.txt' }, { maxFileBytes: 2048 })).to.equal(
        'no matches for /needle/ in .\n(skipped 0 binary files and 1 file over 2048 bytes)',
      );
    });

    it('does not follow symlinks out of the workspace while walking, nor as its path', async () => {
      expect(await grep({ pattern: 'outside secret' })).to.match(/^no matches/);
      expect(
        (await failure(tools.grepTool.execute({ pattern: 'x', path: 'dir-out' }, toolContext(ws.root)))).code,
      ).to.equal('symlink_escape');
    });

    it('stops a catastrophically backtracking pattern without freezing the host thread', async () => {
      writeFileSync(join(ws.root, 'redos.txt'), `${'a'.repeat(40)}!\n`);
      let ticks = 0;
      const heartbeat = setInterval(() => ticks++, 50);
      try {
        const error = await failure(
          tools.grepTool.execute({ pattern: '^(a+)+$', path: 'redos.txt' }, toolContext(ws.root)),
        );
        expect(error.code).to.equal('pattern_too_slow');
      } finally {
        clearInterval(heartbeat);
      }
      expect(ticks).to.be.above(5); // the event loop kept running while the worker backtracked
    });

    it('reports an invalid regular expression', async () => {
      const error = await failure(tools.grepTool.execute({ pattern: '(unclosed' }, toolContext(ws.root)));
      expect(error.code).to.equal('invalid_pattern');
    });
  });

  describe('glob', () => {
    it('lists matching paths, sorted, relative to the workspace root, without .git or node_modules', async () => {
      expect(await glob({ pattern: '**/*.ts' })).to.equal('src/main.ts\nsrc/util/helper.ts');
      expect(await glob({ pattern: '**/index.js' })).to.match(/^no matches/);
      expect(await glob({ pattern: '*', path: 'src' })).to.equal('src/abs-link\nsrc/main.ts\nsrc/style.css\nsrc/util/');
      expect(await glob({ pattern: '**/*.{css,ts}', path: 'src/util' })).to.equal('src/util/helper.ts');
    });

    it('caps the list with a marker', async () => {
      for (let i = 0; i < 12; i++) writeFileSync(join(ws.root, `f${String(i).padStart(2, '0')}.log`), '');
      const rows = (await glob({ pattern: '*.log' }, { maxResults: 2 })).split('\n');
      expect(rows).to.have.length(11);
      expect(rows[10]).to.equal('[… more than 10 matches; narrow the pattern or path]');
    });
  });

  describe('ls', () => {
    it('lists entries with type and size, symlinks with their target', async () => {
      const text = textOf(await tools.lsTool.execute({ path: 'src' }, toolContext(ws.root)));
      expect(text.split('\n')).to.deep.equal([
        `symlink          -  abs-link -> ${join(ws.outside, 'secret.txt')}`,
        'file            44  main.ts',
        'file            11  style.css',
        'dir              -  util/',
      ]);
    });

    it('refuses a file and a path outside', async () => {
      expect((await failure(tools.lsTool.execute({ path: 'a.txt' }, toolContext(ws.root)))).code).to.equal(
        'not_a_directory',
      );
      expect((await failure(tools.lsTool.execute({ path: '..' }, toolContext(ws.root)))).code).to.equal(
        'outside_workspace',
      );
    });
  });

  describe('a workspace that changes under the tools (items 5 and low)', () => {
    const outcome = (p: unknown) =>
      Promise.resolve(p).then(textOf, (e: Error & { code?: string }) => `error ${e.code ?? e.message}`);

    it('grep never reads a file swapped for a symlink out of the workspace during the call, and a vanished file does not end the search', async () => {
      mkdirSync(join(ws.root, 'race'));
      const swapper = startSwapping(join(ws.root, 'race'), join(ws.outside, 'secret.txt'), 'file');
      try {
        await swapper.ready;
        for (let i = 0; i < 15; i++) {
          const text = await outcome(
            tools.grepTool.execute({ pattern: 'secret|inside', path: 'race' }, toolContext(ws.root)),
          );
          expect(text, `call ${i}`)
            .to.not.include('outside secret')
            .and.not.match(/^error/);
        }
      } finally {
        await swapper.stop();
      }
    });

    it('ls and glob never list a directory swapped for a symlink out of the workspace during the call', async () => {
      mkdirSync(join(ws.root, 'race'));
      const swapper = startSwapping(join(ws.root, 'race'), ws.outside, 'dir');
      try {
        await swapper.ready;
        for (let i = 0; i < 300; i++) {
          const listed = await outcome(tools.lsTool.execute({ path: `race/f${i % 20}` }, toolContext(ws.root)));
          expect(listed, `ls ${i}`).to.not.include('secret.txt');
        }
        for (let i = 0; i < 60; i++) {
          const found = await outcome(
            tools.globTool.execute({ pattern: '**/*.txt', path: 'race' }, toolContext(ws.root)),
          );
          expect(found, `glob ${i}`).to.not.include('secret.txt');
        }
      } finally {
        await swapper.stop();
      }
    });

    it('lists names that are not UTF-8 (escaped and marked) in ls, glob and grep, and searches those files', async () => {
      const name = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74]); // "caf\xe9.txt" in Latin-1
      writeFileSync(Buffer.concat([Buffer.from(`${ws.root}/sub/`), name]), 'needle in latin1 name\n');
      writeFileSync(join(ws.root, 'sub', 'new\nline.txt'), 'needle\n');
      const shown = 'caf\\xe9.txt [escaped]';
      const ls = textOf(await tools.lsTool.execute({ path: 'sub' }, toolContext(ws.root)));
      expect(ls)
        .to.include(`file            22  ${shown}`)
        .and.include('new\\x0aline.txt [escaped]')
        .and.include('[escaped: a name holds bytes');
      expect(await glob({ pattern: '**/*.txt', path: 'sub' }))
        .to.include(`sub/${shown}`)
        .and.include('sub/new\\x0aline.txt [escaped]');
      const found = await grep({ pattern: 'needle', path: 'sub' });
      expect(found.split('\n')).to.include.members([
        `sub/${shown}:1: needle in latin1 name`,
        'sub/new\\x0aline.txt [escaped]:1: needle',
      ]);
    });
  });
});
