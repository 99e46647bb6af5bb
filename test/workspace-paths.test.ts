// A policy rule on a file tool's `path` reads the path the tool acts on. Before, it read the path as
// written: docs/policy.md's own CI sample (allow `write` where path is `(build|dist)/.*`, deny the
// rest) let `build/../src/x` through, and a deny on `\.env` missed `./.env`, `sub/../.env`, the
// absolute path, and a symlink to it.
import { expect } from 'chai';
import fs, { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHost, type Host } from '../core/index.ts';
import { canonicalPaths } from '../core/workspace-paths.ts';
import { quietHost, tempDir } from './helpers.ts';

describe('workspace paths: the policy reads the path a file tool acts on', () => {
  let temp: ReturnType<typeof tempDir>;
  let root: string;
  let host: Host;
  before(async () => {
    temp = tempDir('rh-ws-paths-');
    root = join(temp.dir, 'ws');
    for (const dir of ['build', 'src', 'sub']) mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, '.env'), 'SECRET=1\n');
    writeFileSync(join(root, 'src', 'index.ts'), 'export {};\n');
    symlinkSync('../src', join(root, 'build', 'to-src'));
    symlinkSync('.env', join(root, 'env-link'));
    host = await createHost({
      cwd: root,
      audit: false,
      logLevel: 'error',
      config: {
        builtins: ['fs'],
        policy: {
          default: 'deny',
          readOnlyDefault: 'allow',
          allow: [{ tool: 'write', where: { path: '(build|dist)/.*' } }],
          deny: [{ tool: 'read', where: { path: '\\.env' }, reason: 'no secrets' }],
        },
      },
    });
  });
  after(async () => {
    await host.close();
    temp.cleanup();
  });

  it('an allow on build/ lets no write out of build/, by `..`, `.`, `//`, an absolute path or a symlink', async () => {
    for (const path of ['build/../src/x.ts', 'build/./../src/x.ts', 'build//../src/x.ts', 'build/to-src/x.ts']) {
      const r = await host.call('write', { path, content: 'pwned' });
      expect(r.code, path).to.equal('denied');
    }
    expect(existsSync(join(root, 'src', 'x.ts'))).to.equal(false);
    expect(readFileSync(join(root, 'src', 'index.ts'), 'utf8')).to.equal('export {};\n');
    const ok = await host.call('write', { path: `${root}/build/./out.js`, content: 'ok' });
    expect(ok.isError, ok.content).to.equal(false);
    expect(readFileSync(join(root, 'build', 'out.js'), 'utf8')).to.equal('ok');
  });

  it('a deny on .env holds for every way to write its path', async () => {
    for (const path of ['.env', './.env', 'sub/../.env', `${root}/.env`, `${root}//sub/..//.env`, 'env-link']) {
      const r = await host.call('read', { path });
      expect(r.code, path).to.equal('denied');
      expect(r.content).to.include('no secrets');
    }
    expect((await host.call('read', { path: './src/index.ts' })).isError).to.equal(false);
  });

  it('leaves a path out of the workspace as written, for the tool to refuse', async () => {
    const r = await host.call('read', { path: '../outside.txt' });
    expect(r.code).to.equal('tool_error');
    expect(r.content).to.match(/outside_workspace/);
  });

  it('keeps the mark to itself: the schemas models and MCP clients get carry no x-workspace-path', () => {
    const fsTools = host.tools().filter((t) => ['read', 'write', 'edit', 'ls', 'glob', 'grep'].includes(t.name));
    expect(fsTools).to.have.length(6);
    for (const tool of fsTools) {
      expect(JSON.stringify(tool.inputSchema), tool.name).to.not.include('x-workspace-path');
      expect(tool.inputSchema.properties, tool.name).to.have.property('path');
    }
  });
});

describe('workspace paths: the rewrite is bounded by the path the system can resolve', () => {
  let temp: ReturnType<typeof tempDir>;
  const realpath = fs.realpathSync.native;
  let calls: number;
  before(() => {
    temp = tempDir('rh-ws-long-');
    // Counts the system calls the rewrite makes: it runs on the host's thread, before the schema's maxLength.
    fs.realpathSync.native = ((path: fs.PathLike) => {
      calls++;
      return realpath(path);
    }) as typeof realpath;
  });
  beforeEach(() => {
    calls = 0;
  });
  after(() => {
    fs.realpathSync.native = realpath;
    temp.cleanup();
  });

  it('refuses a path of PATH_MAX bytes or more without walking up its 100 000 segments', () => {
    // Each missing segment took a realpath and a dirname of the whole text: 80 KB held the host 2.8 s,
    // and limits.maxInputChars lets 10 MiB through.
    const path = `${'a/'.repeat(100_000)}x`;
    const input = { path };
    expect(canonicalPaths(input, ['path'], temp.dir)).to.match(
      /^\/path: a path must be under 4096 bytes .* 200001 bytes/,
    );
    expect(input.path).to.equal(path);
    expect(calls).to.equal(0);
  });

  it('refuses a short path that is PATH_MAX bytes or more once made absolute', () => {
    const input = { path: 'é'.repeat(2048 - Math.floor(temp.dir.length / 2)) };
    expect(canonicalPaths(input, ['path'], temp.dir)).to.match(/PATH_MAX/);
    expect(canonicalPaths({ path: 'é'.repeat(1000) }, ['path'], temp.dir)).to.equal(undefined);
  });

  it('still rewrites a new file in new directories under the bound', () => {
    const input = { path: `./new/${'d/'.repeat(100)}../file.txt` };
    canonicalPaths(input, ['path'], temp.dir);
    expect(input.path).to.equal(`new/${'d/'.repeat(99)}file.txt`);
  });
});

describe('workspace paths: a marked field the schema does not bound', () => {
  let temp: ReturnType<typeof tempDir>;
  let host: Host;
  before(async () => {
    temp = tempDir('rh-ws-unbounded-');
    mkdirSync(join(temp.dir, 'build'));
    temp.write(
      'plugin.ts',
      `import Type from 'typebox';
       import { definePlugin } from 'rousseau-host';
       export default definePlugin({ name: 'paths', version: '1.0.0', tools: [{
         name: 'show_path', description: 'Returns the path it got.',
         inputSchema: Type.Object({ path: Type.String({ 'x-workspace-path': true, description: 'A path.' }) }),
         execute: ({ path }: { path: string }) => 'got ' + path,
       }] });`,
    );
    host = await quietHost(temp.dir, {
      plugins: [{ module: './plugin.ts', isolation: 'inline' }],
      policy: { default: 'deny', allow: [{ tool: 'show_path', where: { path: 'build/.*' } }] },
    });
  });
  after(async () => {
    await host.close();
    temp.cleanup();
  });

  it('refuses a path too long to resolve, before the policy and the tool read it', async () => {
    for (const path of [`build/${'x/../'.repeat(1000)}../src/x`, `build/${'a/'.repeat(3_000_000)}x`]) {
      const r = await host.call('show_path', { path });
      expect(r.code).to.equal('invalid_input');
      expect(r.content).to.include('/path: a path must be under 4096 bytes (PATH_MAX)');
    }
    expect((await host.call('show_path', { path: 'build/./x' })).content).to.equal('got build/x');
    expect((await host.call('show_path', { path: 'build/../src/x' })).code).to.equal('denied');
  });
});

describe('workspace paths: a path changed on disk while a person approves', () => {
  let temp: ReturnType<typeof tempDir>;
  let root: string;
  let host: Host;
  let during: () => void;
  before(async () => {
    temp = tempDir('rh-ws-swap-');
    root = join(temp.dir, 'ws');
    for (const dir of ['pub', 'secret']) mkdirSync(join(root, dir), { recursive: true });
    host = await createHost({
      cwd: root,
      audit: false,
      logLevel: 'error',
      approve: async () => {
        during();
        return true;
      },
      config: {
        builtins: ['fs'],
        policy: {
          default: 'deny',
          ask: [{ tool: 'write', where: { path: 'pub/.*' } }],
        },
      },
    });
  });
  after(async () => {
    await host.close();
    temp.cleanup();
  });

  it('is written when nothing changed', async () => {
    during = () => {};
    const r = await host.call('write', { path: 'pub/y.txt', content: 'ok' });
    expect(r.isError, r.content).to.equal(false);
  });

  it('is not written when it names another file than the one approved', async () => {
    // The approval can take minutes: a background job swapping pub/ for a symlink to secret/ in
    // that time had the tool follow it, into a directory no rule lets it write.
    during = () => {
      renameSync(join(root, 'pub'), join(root, 'pub-old'));
      symlinkSync('secret', join(root, 'pub'));
    };
    const r = await host.call('write', { path: 'pub/x.txt', content: 'pwned' });
    expect(r.code, r.content).to.equal('denied');
    expect(r.content).to.include('"pub/x.txt" now names "secret/x.txt"');
    expect(existsSync(join(root, 'secret', 'x.txt'))).to.equal(false);
  });
});
