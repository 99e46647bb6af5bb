/**
 * Where the host's own files are. The host runs either from source (tests, tsx) or bundled into
 * dist/ (the `rousseau-host` bin, the published package); each file it hands to jiti or to a worker
 * has one place in each layout, named here.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** True when this module runs from its TypeScript source rather than from dist/. */
export const FROM_SOURCE = import.meta.url.endsWith('.ts');

function findRoot(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'core'))) return dir;
    if (dirname(dir) === dir) throw new Error('rousseau-host: cannot find the package root');
  }
}

/** The package's root directory (where package.json is). */
export const PACKAGE_ROOT = findRoot();

/** A file of the host in the layout it runs from: `source` under tsx, `bundled` (in dist/) otherwise. */
export function hostFile(source: string, bundled: string): string {
  return FROM_SOURCE ? join(PACKAGE_ROOT, source) : join(PACKAGE_ROOT, 'dist', bundled);
}

const TYPEBOX_SUBPATHS = ['', '/compile', '/error', '/format', '/guard', '/schema', '/system', '/type', '/value'];

/**
 * What a plugin or a config may import from the host, resolved to the host's own copies (jiti
 * aliases): `rousseau-host` is the contract helpers only, `typebox` the host's typebox.
 */
export function hostAliases(): Record<string, string> {
  const aliases: Record<string, string> = { 'rousseau-host': hostFile('core/contract.ts', 'contract.js') };
  if (FROM_SOURCE) {
    // typebox's exports all carry a `default` condition, so require.resolve finds the same files as import.
    const require = createRequire(import.meta.url);
    for (const sub of TYPEBOX_SUBPATHS) aliases[`typebox${sub}`] = require.resolve(`typebox${sub}`);
  } else {
    // The bundled copy scripts/build.js makes: one file per subpath instead of 373 modules.
    for (const sub of TYPEBOX_SUBPATHS) aliases[`typebox${sub}`] = join(PACKAGE_ROOT, 'dist', 'vendor', 'typebox', `${sub.slice(1) || 'index'}.mjs`);
  }
  return aliases;
}

