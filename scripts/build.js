// Bundles the host into dist/ so that the `rousseau-host` bin starts on plain node (tsx's hooks tax
// every imported module) and its entries share one copy of the core (code splitting).
// Dependencies stay external: plugins resolve `typebox` to the same installed copy the host uses.
// Built-in plugins import `rousseau-host` like any plugin; here that resolves to the contract helpers.
//
// The bundle is written beside dist/ and swapped in whole, so a process running the CLI never sees
// a half-written dist/. `--if-stale` skips the build when no source is newer than the bundle.
import { build } from 'esbuild';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const stamp = join(dist, '.built');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const sources = ['core', 'plugins'].map((d) => join(root, d)).filter(existsSync);
if (process.argv.includes('--if-stale') && existsSync(stamp)) {
  const built = statSync(stamp).mtimeMs;
  if (sources.every((dir) => newestSource(dir) < built)) process.exit(0);
}

const entryPoints = {
  index: 'core/index.ts',
  contract: 'core/contract.ts',
  cli: 'core/cli/main.ts',
  worker: 'core/sandbox/worker-entry.ts',
};
for (const name of existsSync(join(root, 'plugins')) ? readdirSync(join(root, 'plugins')) : []) {
  entryPoints[`plugins/${name}`] = `plugins/${name}/index.ts`;
}
for (const [name, file] of Object.entries(entryPoints)) if (!existsSync(join(root, file))) delete entryPoints[name];

// typebox is 373 ES modules: importing them costs ~150–250 ms and ~18 MiB per worker. Bundled, it
// costs a fraction of that: dist/vendor/typebox/<subpath>.mjs. The host imports it through its own
// package name (`rousseau-host/vendor/typebox/...`, a self-reference in `exports`), and plugins get
// the same files through the loader's aliases (core/paths.ts), so a thread holds one copy.
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const external = Object.keys(manifest.dependencies ?? {})
  .filter((name) => name !== 'typebox')
  .flatMap((name) => [name, `${name}/*`]);
const typeboxFromVendor = {
  name: 'typebox-from-vendor',
  setup(build) {
    build.onResolve({ filter: /^typebox(\/.*)?$/ }, ({ path }) => ({ path: `rousseau-host/vendor/${path}`, external: true }));
  },
};
const TYPEBOX_SUBPATHS = ['', 'compile', 'error', 'format', 'guard', 'schema', 'system', 'type', 'value'];

const started = Date.now();
const staging = `${dist}.${process.pid}`;
await build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(TYPEBOX_SUBPATHS.map((sub) => [sub || 'index', sub ? `typebox/${sub}` : 'typebox'])),
  outdir: join(staging, 'vendor', 'typebox'),
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
});
await build({
  absWorkingDir: root,
  entryPoints,
  outdir: staging,
  chunkNames: 'chunks/[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  plugins: [typeboxFromVendor],
  alias: { 'rousseau-host': './core/contract.ts' },
  sourcemap: 'linked',
  logLevel: 'warning',
});
// The stamp is dated when the build started: a source saved during the build still counts as newer.
writeFileSync(join(staging, '.built'), new Date(started).toISOString());
utimesSync(join(staging, '.built'), started / 1000, started / 1000);
const old = `${dist}.old.${process.pid}`;
if (existsSync(dist)) renameSync(dist, old);
renameSync(staging, dist);
rmSync(old, { recursive: true, force: true });
