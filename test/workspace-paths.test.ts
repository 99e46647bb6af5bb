// A policy rule on a file tool's `path` reads the path the tool acts on. Before, it read the path as
// written: docs/policy.md's own CI sample (allow `write` where path is `(build|dist)/.*`, deny the
// rest) let `build/../src/x` through, and a deny on `\.env` missed `./.env`, `sub/../.env`, the
// absolute path, and a symlink to it.
import { expect } from 'chai';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHost, type Host } from '../core/index.ts';
import { tempDir } from './helpers.ts';

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
