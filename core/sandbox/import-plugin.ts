/**
 * Imports a plugin module with jiti (TypeScript, ESM or CJS, no build step), in whichever thread
 * runs the plugin.
 *
 * `rousseau-host` and `typebox` resolve to the host's own copies, so a plugin never brings a second
 * copy of either: `rousseau-host` maps to the plugin-facing helpers only (contract.ts, no run-time
 * imports), which keeps a plugin's import cheap.
 */
import { createRequire } from 'node:module';
import { createJiti, type Jiti } from 'jiti';
import { hostFile } from '../paths.ts';

const TYPEBOX_SUBPATHS = ['', '/compile', '/error', '/format', '/guard', '/schema', '/system', '/type', '/value'];

let jiti: Jiti | undefined;

/** Host-side resolution of what a plugin may import from the host's own dependencies. */
export function hostAliases(): Record<string, string> {
  const aliases: Record<string, string> = { 'rousseau-host': hostFile('core/contract.ts', 'contract.js') };
  // typebox's exports all carry a `default` condition, so require.resolve finds the same files as import.
  const require = createRequire(import.meta.url);
  for (const sub of TYPEBOX_SUBPATHS) aliases[`typebox${sub}`] = require.resolve(`typebox${sub}`);
  return aliases;
}

/** Imports `file` and returns its default export (or the module namespace when it has none). */
export async function importPlugin(file: string): Promise<unknown> {
  jiti ??= createJiti(import.meta.url, { alias: hostAliases(), interopDefault: true, moduleCache: true, fsCache: true });
  const mod = (await jiti.import(file)) as Record<string, unknown> | undefined;
  return mod && typeof mod === 'object' && 'default' in mod ? mod.default : mod;
}
