// The package as a plugin author's project sees it: `rousseau-host` installed in node_modules, read by
// their own TypeScript with plain strict options (no allowImportingTsExtensions, no skipLibCheck).
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ROOT, tempDir } from './helpers.ts';

const TSC = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');

// One thread: TypeScript 7 checks on four by default, and each checker works the typebox and
// @types/node declarations out again; on the test run's busy cores that was ~3-4 s more CPU for the
// same errors (interleaved runs of this file: 12.7-15.2 s of CPU, 8.0-11.8 s with it).
function tsc(cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [TSC, '-p', cwd, '--singleThreaded'], { cwd }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

/**
 * A consumer's project: `rousseau-host` (this repo), typebox and @types/node from the repo's
 * node_modules installed by symlink, a plain strict tsconfig over `src/`.
 */
function consumerProject(tmp: ReturnType<typeof tempDir>): void {
  mkdirSync(join(tmp.dir, 'node_modules', '@types'), { recursive: true });
  symlinkSync(ROOT, join(tmp.dir, 'node_modules', 'rousseau-host'));
  for (const link of ['typebox', '@types/node'])
    symlinkSync(join(ROOT, 'node_modules', link), join(tmp.dir, 'node_modules', link));
  tmp.write('package.json', JSON.stringify({ name: 'consumer', type: 'module' }));
  tmp.write(
    'tsconfig.json',
    JSON.stringify({
      compilerOptions: {
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noEmit: true,
      },
      include: ['src'],
    }),
  );
}

// One project and one tsc run for both cases (each a folder of src/ with one deliberate type error):
// tsc is most of this file's time. Each test takes every error outside the other case's folder, so
// an error anywhere else (the package's own types included) fails both.
describe('the package for a TypeScript project', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  let errors: string[];
  let output: string;

  before(async () => {
    tmp = tempDir();
    consumerProject(tmp);
    tmp.write(
      'src/plugin/index.ts',
      `import Type from 'typebox';
import { createHost, definePlugin, defineTool, type CallResult } from 'rousseau-host';
export default definePlugin({
  name: 'typed',
  version: '1.0.0',
  tools: [defineTool({ name: 'shout', description: 'Upper-cases text.', inputSchema: Type.Object({ text: Type.String({ description: 'Text.' }) }), async execute({ text }, ctx) { ctx.signal.throwIfAborted(); return text.toUpperCase(); } })],
});
export async function shout(text: string): Promise<CallResult> {
  const host = await createHost({ config: { builtins: false } });
  try { return await host.call('shout', { text }); } finally { await host.close(); }
}
`,
    );
    // The input's type comes from the schema: a number method on a string field must be the one error.
    tmp.write(
      'src/plugin/wrong.ts',
      `import Type from 'typebox';\nimport { defineTool } from 'rousseau-host';\nexport const t = defineTool({ name: 'n', description: 'd', inputSchema: Type.Object({ text: Type.String({ description: 'Text.' }) }), async execute({ text }) { return text.toFixed(1); } });\n`,
    );
    // Typed, the one error is the wrong field type; untyped, it would be TS7016 (no declaration file) instead.
    tmp.write(
      'src/vendor/index.ts',
      `import Type, { type Static } from 'rousseau-host/vendor/typebox';
import { Compile } from 'rousseau-host/vendor/typebox/compile';
const schema = Type.Object({ city: Type.String() });
export const ok: boolean = Compile(schema).Check({ city: 'Oslo' });
export const wrong: Static<typeof schema> = { city: 42 };
`,
    );
    const result = await tsc(tmp.dir);
    output = result.output;
    expect(result.code, output).to.not.equal(0);
    errors = output.split('\n').filter((line) => /error TS\d+/.test(line));
  });
  after(() => tmp?.cleanup());

  it("type-checks a plugin and an embedder under the author's own strict options, with exactly their own type errors reported", () => {
    const own = errors.filter((line) => !line.startsWith('src/vendor/'));
    expect(own, output).to.have.length(1);
    expect(own[0]).to.match(
      /^src\/plugin\/wrong\.ts\(3,\d+\): error TS\d+: Property 'toFixed' does not exist on type 'string'/,
    );
  });

  it("types the vendored typebox (rousseau-host/vendor/typebox and its subpaths) for a consumer's tsc", () => {
    const own = errors.filter((line) => !line.startsWith('src/plugin/'));
    expect(own, output).to.have.length(1);
    expect(own[0]).to.match(
      /^src\/vendor\/index\.ts\(5,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/,
    );
  });
});
