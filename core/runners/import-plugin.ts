/**
 * Imports a plugin module with jiti (TypeScript, ESM or CJS, no build step), in whichever thread
 * runs the plugin.
 *
 * `rousseau-host` and `typebox` resolve to the host's own copies, so a plugin never brings a second
 * copy of either: `rousseau-host` maps to the plugin-facing helpers only (contract.ts, no run-time
 * imports), which keeps a plugin's import cheap.
 */
import { createRequire } from 'node:module';
import { sep } from 'node:path';
import { createJiti, type Jiti } from 'jiti';
import { hostAliases } from '../paths.ts';

let jiti: Jiti | undefined;

/**
 * Imports `file` and returns its default export (or the module namespace when it has none).
 * `fresh` (a reload) evaluates `file` and its local imports again instead of reusing the cached modules.
 */
export async function importPlugin(file: string, fresh = false): Promise<unknown> {
  if (fresh) forgetModules(file);
  // jiti's transpile cache (fsCache) is on by default; JITI_FS_CACHE=false or a directory overrides it.
  jiti ??= createJiti(import.meta.url, { alias: hostAliases(), interopDefault: true });
  const mod = (await jiti.import(file)) as Record<string, unknown> | undefined;
  return mod && typeof mod === 'object' && 'default' in mod ? mod.default : mod;
}

/**
 * jiti keeps what it evaluated in Node's CommonJS module cache (`require.cache`), shared by the
 * thread. Drops `file` and, through the cache's import graph, every module it imported outside
 * node_modules: an edited helper file is read again, while typebox and other packages stay shared.
 */
function forgetModules(file: string): void {
  const cache = createRequire(import.meta.url).cache;
  const dependency = `${sep}node_modules${sep}`;
  const pending = [file];
  for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
    const cached = cache[id];
    if (!cached || id.includes(dependency)) continue;
    delete cache[id];
    for (const child of cached.children) pending.push(child.id);
  }
}
