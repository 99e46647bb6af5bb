// Bundles the host into dist/ so that the `rousseau-host` bin starts on plain node (tsx's hooks tax
// every imported module) and its entries share one copy of the core (code splitting).
// Dependencies stay external: plugins resolve `typebox` to the same installed copy the host uses.
// Built-in plugins import `rousseau-host` like any plugin; here that resolves to the contract helpers.
import { build } from 'esbuild';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const entryPoints = {
  index: 'core/index.ts',
  contract: 'core/contract.ts',
  cli: 'core/cli/main.ts',
  worker: 'core/sandbox/worker-entry.ts',
};
for (const name of existsSync(root + 'plugins') ? readdirSync(root + 'plugins') : []) {
  entryPoints[`plugins/${name}`] = `plugins/${name}/index.ts`;
}
for (const [name, file] of Object.entries(entryPoints)) if (!existsSync(root + file)) delete entryPoints[name];

rmSync(root + 'dist', { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints,
  outdir: 'dist',
  chunkNames: 'chunks/[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  alias: { 'rousseau-host': './core/contract.ts' },
  sourcemap: 'linked',
  logLevel: 'warning',
});
