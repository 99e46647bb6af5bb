// What README.md tells a new user before anything is published, held to what the repo does: the
// caveat comes before the first command that needs it, and the files and commands it names exist.
import { expect } from 'chai';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, tempDirPerTest } from './helpers.ts';
import { run } from './scaffold/helpers.ts';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const manifest = (dir: string) =>
  JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
    workspaces?: string[];
    scripts?: Record<string, string>;
  };

describe('README: the path before publication', () => {
  it('warns what works before publication before it first says `npm create rousseau-tool`', () => {
    const caveat = readme.indexOf('**Before publication.**');
    expect(caveat, 'the caveat').to.be.greaterThan(-1);
    expect(caveat).to.be.lessThan(readme.indexOf('npm create rousseau-tool'));
    const text = readme.slice(caveat, readme.indexOf('```', caveat));
    expect(text).to.include('`npm run pack`').and.include('`packed/`');
  });

  it('is true: the scaffolder is a workspace of the clone, `pack` exists, and the tarballs it names are the ones npm makes', () => {
    const host = manifest('.');
    expect(host.workspaces).to.include('scripts/create-rousseau-tool');
    expect(host.scripts).to.have.property('pack');
    const create = manifest('scripts/create-rousseau-tool');
    const named = new Set(readme.match(/packed\/[\w.-]+\.tgz/g));
    expect([...named].sort()).to.deep.equal(
      [`packed/${host.name}-${host.version}.tgz`, `packed/${create.name}-${create.version}.tgz`].sort(),
    );
  });

  it('says the quick start is for a clone: what it runs is not in the package', () => {
    const quick = readme.slice(
      readme.indexOf('## Quick start'),
      readme.indexOf('```', readme.indexOf('## Quick start')),
    );
    expect(quick).to.include('In a clone of this repo');
    const host = manifest('.') as { files?: string[]; scripts?: Record<string, string> };
    // `npm start` plays examples/demo, which the package leaves out: from a tarball it cannot run.
    expect(host.scripts?.start).to.include('examples/demo');
    expect(host.files).to.not.include('examples');
  });

  it("installs the host in the agent's project before its first npx rousseau-host there", () => {
    const section = readme.slice(
      readme.indexOf('## Write your first tool'),
      readme.indexOf('\n## ', readme.indexOf('## Write your first tool') + 1),
    );
    const agent = section.slice(section.indexOf("in your agent's project"));
    const install = agent.indexOf('npm install rousseau-host');
    expect(install, 'the host installed there').to.be.greaterThan(-1);
    expect(install).to.be.lessThan(agent.indexOf('npx rousseau-host'));
  });
});

/** The first TypeScript block of `## heading`'s section in a markdown file. */
function firstTsBlock(markdown: string, heading: string): string {
  const section = markdown.slice(markdown.indexOf(`\n${heading}\n`));
  const start = section.indexOf('```ts\n') + '```ts\n'.length;
  return section.slice(start, section.indexOf('\n```', start));
}

describe('README, docs/agent.md and docs/serve.md: the TypeScript examples a user copies', () => {
  const project = tempDirPerTest('rh-embed-');

  it('compile under tsc --strict in a project of their own, with the packages as they install', async function () {
    this.timeout(60_000); // tsc on a loaded machine
    // The package by its name, resolved through its `exports` to dist/types, as in node_modules.
    mkdirSync(join(project.dir, 'node_modules'));
    symlinkSync(ROOT, join(project.dir, 'node_modules', 'rousseau-host'), 'dir');
    for (const scope of ['@types', '@modelcontextprotocol'])
      symlinkSync(join(ROOT, 'node_modules', scope), join(project.dir, 'node_modules', scope), 'dir');
    project.write('package.json', '{ "type": "module" }\n');
    // What `tsc --init` writes, with `types` naming node as the README says to.
    project.write(
      'tsconfig.json',
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          target: 'esnext',
          types: ['node'],
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          verbatimModuleSyntax: true,
          isolatedModules: true,
          skipLibCheck: true,
          noEmit: true,
        },
      }),
    );
    const embed = firstTsBlock(readme, '## Embedding');
    expect(embed).to.include('createHost(');
    project.write('readme.ts', embed);
    const agent = firstTsBlock(readFileSync(join(ROOT, 'docs', 'agent.md'), 'utf8'), '## Embedding');
    expect(agent).to.include('new Agent(');
    project.write('agent.ts', agent);
    // serve.md's MCP client, with the SDK the user installs.
    const client = firstTsBlock(readFileSync(join(ROOT, 'docs', 'serve.md'), 'utf8'), '### From curl or a script');
    expect(client).to.include('StreamableHTTPClientTransport');
    project.write('client.ts', client);
    // serve.md's client that opens a new session when the host behind its session is gone.
    const link = firstTsBlock(readFileSync(join(ROOT, 'docs', 'serve.md'), 'utf8'), '### When a host goes away');
    expect(link).to.include('class Link');
    project.write('link.ts', link);
    const tsc = await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], {
      cwd: project.dir,
      timeoutMs: 50_000,
    });
    expect(tsc.stdout + tsc.stderr).to.equal('');
    expect(tsc.code).to.equal(0);
  });
});
