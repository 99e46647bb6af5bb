// Loads a plugin's module the way the host does (jiti, `rousseau-host` aliased to the contract
// helpers), so tests can reach a plugin's parts without depending on dist/.
import { fileURLToPath } from 'node:url';
import { createJiti } from 'jiti';
import { hostAliases } from '../../core/paths.ts';

const jiti = createJiti(import.meta.url, { alias: hostAliases(), moduleCache: true, fsCache: true });

/** `rel` is relative to the package root, e.g. `plugins/fs/read.ts`. */
export function loadPluginModule<T>(rel: string): Promise<T> {
  return jiti.import<T>(fileURLToPath(new URL(`../../${rel}`, import.meta.url)));
}
