// Bundles the host into dist/ so that the `rousseau-host` bin starts on plain node (tsx's hooks tax
// every imported module). index.js, the worker and the built-ins share one copy of the core (code
// splitting); the CLI has its own (see below).
// Dependencies stay external: plugins resolve `typebox` to the same installed copy the host uses.
// The MCP SDK, a development dependency, is bundled into dist/vendor/mcp-sdk/ (below).
// Built-in plugins import `rousseau-host` like any plugin; here that resolves to the contract helpers.
//
// The bundle is written beside dist/ and swapped in whole, so a process running the CLI never sees
// a half-written dist/. `--if-stale` skips the build when no source is newer than the bundle.
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const stamp = join(dist, '.built');

/** The newest mtime under `dir`: files, and directories too (a deleted file changes its directory's). */
function newestSource(dir) {
  let newest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Everything the bundle is made from: the sources, the manifest and lockfile (dependencies, exports), the tsconfigs (declarations), this script. */
function newestInput() {
  const dirs = ['core', 'plugins'].map((d) => join(root, d)).filter(existsSync);
  const files = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.types.json', 'scripts/build.js']
    .map((f) => join(root, f))
    .filter(existsSync);
  return Math.max(...dirs.map(newestSource), ...files.map((f) => statSync(f).mtimeMs));
}

const isFresh = () => existsSync(stamp) && newestInput() < statSync(stamp).mtimeMs;

// Concurrent test runs share this checkout: one builds, the others wait for it, then see it fresh.
const lock = join(root, '.dist.lock');
const deadline = Date.now() + 120_000;
for (;;) {
  try {
    closeSync(openSync(lock, 'wx'));
    break;
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
    const heldSince = statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
    if (Date.now() - heldSince > 120_000 || Date.now() > deadline)
      rmSync(lock, { force: true }); // left by a killed build
    else await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
process.on('exit', () => rmSync(lock, { force: true }));
if (process.argv.includes('--if-stale') && isFresh()) process.exit(0);
const { build } = await import('esbuild');

const entryPoints = {
  index: 'core/index.ts',
  contract: 'core/contract.ts',
  worker: 'core/runners/worker-entry.ts',
};
for (const name of existsSync(join(root, 'plugins')) ? readdirSync(join(root, 'plugins')) : []) {
  entryPoints[`plugins/${name}`] = `plugins/${name}/index.ts`;
}
for (const [name, file] of Object.entries(entryPoints)) if (!existsSync(join(root, file))) delete entryPoints[name];

// typebox is 373 ES modules: importing them costs ~150–250 ms and ~18 MiB per worker. Bundled, it
// costs a fraction of that: dist/vendor/typebox/<subpath>.mjs. The host imports it through its own
// package name (`rousseau-host/vendor/typebox/...`, a self-reference in `exports`), and plugins get
// the same files through the loader's aliases (core/paths.ts), so a thread holds one copy.
// Minified: V8 keeps each module's source text for as long as the thread lives, and every worker
// plugin that imports typebox holds its own; half the text is ~0.5 MiB less per worker, and less to
// parse for every plugin load. The cost: a stack frame inside typebox names a minified function.
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const external = Object.keys(manifest.dependencies ?? {})
  .filter((name) => name !== 'typebox')
  .flatMap((name) => [name, `${name}/*`]);
const typeboxFromVendor = {
  name: 'typebox-from-vendor',
  setup(build) {
    build.onResolve({ filter: /^typebox(\/.*)?$/ }, ({ path }) => ({
      path: `rousseau-host/vendor/${path}`,
      external: true,
    }));
  },
};
const TYPEBOX_SUBPATHS = ['', 'compile', 'error', 'format', 'guard', 'schema', 'system', 'type', 'value'];

// The MCP SDK from ~230 ES modules (its own, zod's, ajv's) cost `start --mcp` and `serve` ~0.26 s of
// CPU and ~0.28 s of wall a start on a 2-core VM (`import('@modelcontextprotocol/sdk/server/index.js')`
// alone: 0.47 s of CPU, 0.21 bundled), most of it the loader resolving, reading and linking file after
// file. Bundled once into dist/vendor/mcp-sdk/, one file per subpath the host imports and the chunks
// they share; the host's bundles import them by the package's own name, as typebox above. Installing
// the host no longer pulls the SDK's ~270 packages (express, hono, ajv, zod...), none of which it
// runs. A build of its own: its CommonJS parts (ajv, cross-spawn) need a `require` (the banner), which
// the host's chunks, a worker's among them, are better without. Not minified: no worker loads it,
// and its stack frames stay readable.
const MCP_SDK_SUBPATHS = [
  'client/index',
  'client/stdio',
  'client/streamableHttp',
  'server/index',
  'server/requestBody',
  'server/streamableHttp',
  'shared/mediaType',
  'shared/protocol',
  'types',
];
const mcpSdkFromVendor = {
  name: 'mcp-sdk-from-vendor',
  setup(build) {
    build.onResolve({ filter: /^@modelcontextprotocol\/sdk\// }, ({ path }) => {
      const sub = path.slice('@modelcontextprotocol/sdk/'.length).replace(/\.js$/, '');
      if (!MCP_SDK_SUBPATHS.includes(sub))
        throw new Error(`build: ${path} is not bundled into dist/vendor/mcp-sdk: add it to MCP_SDK_SUBPATHS`);
      return { path: `rousseau-host/vendor/mcp-sdk/${sub}.mjs`, external: true };
    });
  },
};

const started = Date.now();
const staging = `${dist}.${process.pid}`;
await build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(TYPEBOX_SUBPATHS.map((sub) => [sub || 'index', sub ? `typebox/${sub}` : 'typebox'])),
  outdir: join(staging, 'vendor', 'typebox'),
  outExtension: { '.js': '.mjs' },
  minify: true,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
});
const mcpSdk = await build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(MCP_SDK_SUBPATHS.map((sub) => [sub, `@modelcontextprotocol/sdk/${sub}.js`])),
  outdir: join(staging, 'vendor', 'mcp-sdk'),
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  banner: {
    js: "import { createRequire as __rhCreateRequire } from 'node:module'; const require = __rhCreateRequire(import.meta.url);",
  },
  metafile: true,
  logLevel: 'warning',
});
// Their licenses ask for their notices in every copy.
writeFileSync(join(staging, 'vendor', 'mcp-sdk', 'THIRD_PARTY_LICENSES.md'), thirdPartyLicenses(mcpSdk.metafile));
// The bundle's types are typebox's own: each subpath re-exports the installed typebox's declarations
// (a dependency of this package, so a consumer's TypeScript finds it from here).
for (const sub of TYPEBOX_SUBPATHS) {
  const from = sub ? `typebox/${sub}` : 'typebox';
  const hasDefault = 'default' in (await import(from));
  writeFileSync(
    join(staging, 'vendor', 'typebox', `${sub || 'index'}.d.mts`),
    `export * from '${from}';\n${hasDefault ? `export { default } from '${from}';\n` : ''}`,
  );
}
const hostBuild = {
  absWorkingDir: root,
  outdir: staging,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  plugins: [typeboxFromVendor, mcpSdkFromVendor],
  alias: { 'rousseau-host': './core/contract.ts' },
  sourcemap: 'linked',
  logLevel: 'warning',
};
await build({ ...hostBuild, entryPoints, chunkNames: 'chunks/[hash]' });
// The CLI is a build of its own. Bundled with the entries above, each command it imports lazily
// split the core into chunks by which commands reach what: the package's entry loaded 24 files at
// start instead of 11 (~28 M instructions on the host's thread of a 100-plugin load on Node 22,
// callgrind). The CLI's copy of the core never meets index.js's in one thread: plugins and configs
// import `rousseau-host` as contract.js (hostAliases), workers start from worker.js, and the one
// shared state, the watchdog, is kept on globalThis (core/runners/watchdog.ts).
// `cli-cache` turns Node's compile cache on before the bin imports `cli` (core/user-cache.ts).
await build({
  ...hostBuild,
  entryPoints: { cli: 'core/cli/main.ts', 'cli-cache': 'core/user-cache.ts' },
  chunkNames: 'cli-chunks/[hash]',
});
// Declarations for plugin authors and embedders (tsconfig.types.json says why they are not the sources).
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
try {
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.types.json'), '--outDir', join(staging, 'types')], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
} catch (error) {
  rmSync(staging, { recursive: true, force: true });
  throw new Error(`build: emitting dist/types failed:\n${error.stdout ?? ''}${error.stderr ?? error.message}`);
}
// The stamp is dated when the build started: a source saved during the build still counts as newer.
writeFileSync(join(staging, '.built'), new Date(started).toISOString());
utimesSync(join(staging, '.built'), started / 1000, started / 1000);
const old = `${dist}.old.${process.pid}`;
if (existsSync(dist)) renameSync(dist, old);
renameSync(staging, dist);
rmSync(old, { recursive: true, force: true });

/** Each package whose files a build took, with its license text. */
function thirdPartyLicenses(metafile) {
  const packages = new Map();
  for (const input of Object.keys(metafile.inputs)) {
    const at = input.lastIndexOf('node_modules/');
    if (at === -1) continue;
    const [scope, name] = input.slice(at + 'node_modules/'.length).split('/');
    const pkg = scope.startsWith('@') ? `${scope}/${name}` : scope;
    packages.set(pkg, join(root, input.slice(0, at), 'node_modules', pkg));
  }
  let text = '# Third-party licenses\n\nThe files in this folder bundle code of these packages.\n';
  for (const [name, dir] of [...packages].sort(([a], [b]) => a.localeCompare(b))) {
    const { version, license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const file = readdirSync(dir).find((f) => /^licen[cs]e(\.md|\.txt)?$/i.test(f));
    if (!file) throw new Error(`build: ${name} is bundled into dist/ but ships no license file to copy`);
    text += `\n## ${name} ${version} (${license})\n\n${readFileSync(join(dir, file), 'utf8').trim()}\n`;
  }
  return text;
}
