import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import { node22 } from '../../scripts/node22.ts';
import { createHost } from '../../core/index.ts';
import { importPlugin } from '../../core/runners/import-plugin.ts';
import { FIXTURES, tempDir } from '../helpers.ts';

const SCRIPT = join(FIXTURES, 'native-import', 'load-plugins.mjs');

interface Outcome {
  typeStripping: boolean;
  statuses: { source: string; isolation: string; status: string; loader?: string; error?: string }[];
  calls: Record<string, string>;
  reloadedLoader?: string;
}

/**
 * Runs the script with `node`; its stderr must stay empty (no warning about how a plugin was parsed).
 * The stripped text of its TypeScript files is kept in a temp dir, not the user's cache.
 */
function run(node: string): Outcome {
  const cache = tempDir();
  const env = { ...process.env, RH_CACHE_DIR: cache.dir };
  const { stdout, stderr, status } = spawnSync(node, [SCRIPT], { encoding: 'utf8', env });
  cache.cleanup();
  expect(stderr).to.equal('');
  expect(status).to.equal(0);
  return JSON.parse(stdout) as Outcome;
}

/** Node 20: jiti takes every plugin, and serves the same tools as Node's loader does. */
function expectJiti(outcome: Outcome): void {
  expect(outcome.statuses.map((s) => [s.status, s.loader])).to.deep.equal(Array(6).fill(['loaded', 'jiti']));
  expect(outcome.calls).to.deep.equal({
    plain_say: 'before true',
    enum_say: 'Red',
    typeless_say: 'typeless',
    cjs_say: 'cjs',
    worker_say: 'before',
    worker_js_say: 'js',
    reloaded: 'after true',
  });
  expect(outcome.reloadedLoader).to.equal('jiti');
}

function expectNative(outcome: Outcome): void {
  const statuses = Object.fromEntries(outcome.statuses.map((s) => [s.source, s]));
  // Types stripped by Node, `typebox` and `rousseau-host` resolved to the host's copies (`true`).
  expect(statuses['./plain.ts']).to.include({ status: 'loaded', loader: 'native' });
  expect(outcome.calls.plain_say).to.equal('before true');
  // An enum is TypeScript that stripping refuses: jiti loads it, and no error is reported.
  expect(statuses['./enum.ts']).to.deep.equal({
    source: './enum.ts',
    isolation: 'inline',
    status: 'loaded',
    loader: 'jiti',
  });
  expect(outcome.calls.enum_say).to.equal('Red');
  // A package.json without "type" would make Node warn as it reparses the file: jiti's.
  expect(statuses['./typeless/typeless.ts']).to.include({ status: 'loaded', loader: 'jiti' });
  // CommonJS in a `.ts` file of an ES module package runs until `module` is found missing: jiti's.
  expect(statuses['./cjs.ts']).to.include({ status: 'loaded', loader: 'jiti' });
  expect(outcome.calls.cjs_say).to.equal('cjs');
  // In a worker, TypeScript is jiti's (Node's type stripper would cost the thread ~6 MiB more)...
  expect(statuses['./worker.ts']).to.include({ status: 'loaded', loader: 'jiti' });
  expect(outcome.calls.worker_say).to.equal('before');
  // ...and JavaScript Node's, through the resolve hook registered in the worker's own thread.
  expect(statuses['./worker-js.js']).to.include({ status: 'loaded', loader: 'native' });
  expect(outcome.calls.worker_js_say).to.equal('js');
  // A reload evaluates the entry and its edited local import again, still natively.
  expect(outcome.reloadedLoader).to.equal('native');
  expect(outcome.calls.reloaded).to.equal('after true');
}

describe('importPlugin: where a plugin failed', () => {
  it('locates a syntax error once, as file:line:col', async () => {
    const tmp = tempDir();
    try {
      const file = tmp.write(
        'bad.ts',
        'export default {\n  name: "bad",\n  tools: [{ name: "x" description: "y" }],\n};\n',
      );
      const error = await importPlugin(file).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.message).to.match(/Unexpected token/);
      const places = error!.message.match(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+`, 'g'));
      expect(places, error!.message).to.deep.equal([`${file}:3:22`]);
      expect(error!.message).to.not.include('\n');
    } finally {
      tmp.cleanup();
    }
  });
});

describe('importPlugin: which loader takes a plugin', () => {
  it('uses the loader the running Node allows: jiti on Node 20', () => {
    const outcome = run(process.execPath);
    expect(outcome.typeStripping).to.equal(Boolean((process.features as { typescript?: unknown }).typescript));
    if (outcome.typeStripping) expectNative(outcome);
    else expectJiti(outcome);
  });

  it("loads through Node's own loader on Node 22, jiti where Node refuses, the same tools either way", function () {
    this.timeout(120_000); // the first run may install node@22 from npm's cache
    const outcome = run(node22());
    expect(outcome.typeStripping).to.equal(true);
    expectNative(outcome);
  });

  it("loads jiti in a worker with require: Node's ES module loader never scans its CommonJS bundle", async () => {
    // An import() of jiti had Node's loader parse jiti's 190 KB bundle for its exports in each
    // worker (cjs-module-lexer): ~2.6 MiB of RSS per worker plugin (docs/isolation.md, "Memory").
    const tmp = tempDir();
    try {
      tmp.write(
        'probe.ts',
        `import Type from 'typebox';
export default {
  name: 'probe',
  version: '1.0.0',
  tools: [{
    name: 'modules',
    description: 'Which of Node\\'s own modules this thread loaded.',
    inputSchema: Type.Object({}, { additionalProperties: false }),
    execute: () => JSON.stringify((process as unknown as { moduleLoadList: string[] }).moduleLoadList),
  }],
};
`,
      );
      const config = {
        builtins: false as const,
        policy: { default: 'allow' as const },
        plugins: [{ module: './probe.ts', isolation: 'worker' as const }],
      };
      const host = await createHost({ cwd: tmp.dir, audit: false, logLevel: 'error', config });
      try {
        expect(host.plugins().map((p) => [p.status, p.loader])).to.deep.equal([['loaded', 'jiti']]);
        const result = await host.call('modules', {});
        const loaded = JSON.parse(result.content as string) as string[];
        expect(loaded).to.include('NativeModule vm'); // jiti's: the list is the worker's own
        expect(loaded.filter((m) => m.includes('cjs-module-lexer'))).to.deep.equal([]);
      } finally {
        await host.close();
      }
    } finally {
      tmp.cleanup();
    }
  });
});
