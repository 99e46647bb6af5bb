/**
 * Imports a plugin module with jiti (TypeScript, ESM or CJS, no build step), in whichever thread
 * runs the plugin.
 *
 * `rousseau-host` and `typebox` resolve to the host's own copies, so a plugin never brings a second
 * copy of either: `rousseau-host` maps to the plugin-facing helpers only (contract.ts, no run-time
 * imports), which keeps a plugin's import cheap.
 */
import { createRequire } from 'node:module';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJiti, type Jiti } from 'jiti';
import { messageOf } from '../errors.ts';
import { hostAliases, PACKAGE_ROOT } from '../paths.ts';

let jiti: Jiti | undefined;

/**
 * Imports `file` and returns its default export; `undefined` when it has none (the contract check
 * then says so). A throw while importing names the plugin's file and line it came from. `fresh` (a
 * reload) evaluates `file` and its local imports again instead of reusing the cached modules.
 */
export async function importPlugin(file: string, fresh = false): Promise<unknown> {
  if (fresh) forgetModules(file);
  // jiti's transpile cache (fsCache) is on by default; JITI_FS_CACHE=false or a directory overrides it.
  jiti ??= createJiti(import.meta.url, { alias: hostAliases(), interopDefault: true });
  let mod: Record<string, unknown> | undefined;
  try {
    mod = (await jiti.import(file)) as Record<string, unknown> | undefined;
  } catch (error) {
    const site = throwSite(error);
    if (!site) throw error;
    throw new Error(`${messageOf(error)} (thrown at ${site})`, { cause: error });
  }
  if (!mod || typeof mod !== 'object') return mod;
  if ('default' in mod) return mod.default;
  // jiti hands a CommonJS module's `module.exports` back bare when it is imported a second time.
  return PLUGIN_KEYS.some((key) => key in mod) ? mod : undefined;
}

/** Keys of a plugin object: a module without a default export that has them is a CommonJS plugin. */
const PLUGIN_KEYS = ['name', 'tools', 'setup'];

/** The host's own code, whose frames are not the plugin's. */
const HOST_CODE = [join(PACKAGE_ROOT, 'core') + sep, join(PACKAGE_ROOT, 'dist') + sep];

/** The first `file:line:column` of the stack that is the plugin's: not Node's, a dependency's or the host's. */
function throwSite(error: unknown): string | undefined {
  let stack: unknown;
  try {
    stack = (error as { stack?: unknown } | null)?.stack;
  } catch {
    return undefined; // a hostile getter: the message alone will do
  }
  if (typeof stack !== 'string') return undefined;
  for (const line of stack.split('\n').slice(1)) {
    const frame = /\(?((?:file:\/\/)?\/[^()]*?):(\d+):(\d+)\)?\s*$/.exec(line);
    if (!frame) continue;
    const path = frame[1]!.startsWith('file:') ? fileURLToPath(frame[1]!) : frame[1]!;
    if (path.includes(`${sep}node_modules${sep}`) || HOST_CODE.some((dir) => path.startsWith(dir))) continue;
    return `${path}:${frame[2]}:${frame[3]}`;
  }
  return undefined;
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
