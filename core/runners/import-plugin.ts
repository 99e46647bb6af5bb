/**
 * Imports a plugin module with jiti (TypeScript, ESM or CJS, no build step), in whichever thread
 * runs the plugin.
 *
 * `rousseau-host` and `typebox` resolve to the host's own copies, so a plugin never brings a second
 * copy of either: `rousseau-host` maps to the plugin-facing helpers only (contract.ts, no run-time
 * imports), which keeps a plugin's import cheap.
 */
import { createJiti, type Jiti } from 'jiti';
import { hostAliases } from '../paths.ts';

let jiti: Jiti | undefined;

/** Imports `file` and returns its default export (or the module namespace when it has none). */
export async function importPlugin(file: string): Promise<unknown> {
  // jiti's transpile cache (fsCache) is on by default; JITI_FS_CACHE=false or a directory overrides it.
  jiti ??= createJiti(import.meta.url, { alias: hostAliases(), interopDefault: true });
  const mod = (await jiti.import(file)) as Record<string, unknown> | undefined;
  return mod && typeof mod === 'object' && 'default' in mod ? mod.default : mod;
}
