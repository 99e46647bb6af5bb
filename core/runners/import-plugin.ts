/**
 * Imports a plugin module in whichever thread runs the plugin: through Node's own loader where Node
 * strips TypeScript types itself (22.18 and later), else with jiti (TypeScript, ESM or CJS, no build
 * step). In a worker thread or a process of its own, TypeScript goes to jiti even there: Node's type
 * stripper is a WebAssembly build of swc that costs each thread or process ~6 MiB more than jiti
 * does (docs/isolation.md, "Memory"). docs/plugins.md ("How a plugin is loaded") says which file
 * takes which path.
 *
 * `rousseau-host` and `typebox` resolve to the host's own copies either way (jiti's aliases, or a
 * resolve hook registered once per thread), so a plugin never brings a second copy of either:
 * `rousseau-host` maps to the plugin-facing helpers only (contract.ts, no run-time imports), which
 * keeps a plugin's import cheap.
 */

import * as nodeModule from 'node:module';
import { createRequire } from 'node:module';
import { dirname, extname, join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Jiti } from 'jiti';
import { messageOf } from '../errors.ts';
import { requireJiti } from '../jiti.ts';
import { hostAliases, PACKAGE_ROOT } from '../paths.ts';
import type { PluginLoader } from '../types.ts';
import { strippedSource } from './stripped-cache.ts';
import { readJsonFile } from '../json-text.ts';

/** jiti, loaded on first use: ~100 ms a plugin that Node's own loader takes never pays. */
let jiti: Jiti | undefined;

export interface ImportedPlugin {
  /** The module's default export; `undefined` when it has none (the contract check then says so). */
  exported: unknown;
  loader: PluginLoader;
}

/**
 * Imports `file`. A throw while importing names the plugin's file and line it came from. `fresh` (a
 * reload) evaluates `file` and its local imports again instead of reusing the cached modules.
 * `thread` is where the plugin runs: the host's own, or an isolate of the plugin's (a worker thread
 * or a process), where Node's loader takes only JavaScript.
 */
export async function importPlugin(
  file: string,
  fresh = false,
  thread: 'host' | 'isolate' = 'host',
): Promise<ImportedPlugin> {
  if (takesNativeImport(file, thread, fresh)) {
    try {
      return { exported: pluginOf(await import(nativeUrl(file, fresh))), loader: 'native' };
    } catch (error) {
      // Syntax type stripping refuses (enums, namespaces, parameter properties), a type imported
      // without `import type`, `./x.js` naming x.ts: jiti takes what Node's loader did not.
      if (!refusedByNode(error)) throw withThrowSite(error);
    }
  }
  if (fresh) forgetModules(file);
  // jiti's transpile cache (fsCache) is on by default; JITI_FS_CACHE=false or a directory overrides it.
  jiti ??= requireJiti().createJiti(import.meta.url, {
    alias: hostAliases(),
    interopDefault: true,
  });
  try {
    return { exported: pluginOf(await jiti.import(file)), loader: 'jiti' };
  } catch (error) {
    throw withThrowSite(error);
  }
}

function pluginOf(mod: unknown): unknown {
  if (!mod || typeof mod !== 'object') return mod;
  if ('default' in mod) return mod.default;
  // jiti hands a CommonJS module's `module.exports` back bare when it is imported a second time.
  return PLUGIN_KEYS.some((key) => key in mod) ? mod : undefined;
}

function withThrowSite(error: unknown): unknown {
  const site = throwSite(error);
  if (!site) return error;
  const message = messageOf(error);
  // A syntax error names its place in its own text (jiti: `ParseError: … \n /x.ts:5:14`): said
  // once, at the end, where a throw's place goes.
  const at = message.indexOf(site);
  if (at !== -1) {
    const rest = `${message.slice(0, at).trimEnd()} ${message.slice(at + site.length).trim()}`.trim();
    return new Error(`${rest} (at ${site})`, { cause: error });
  }
  return new Error(`${message} (thrown at ${site})`, { cause: error });
}

/** What Node ≥ 22.18 adds to `node:module` and `process.features`, beyond the Node 20 typings. */
interface ResolveContext {
  parentURL?: string | undefined;
}
interface Resolved {
  url: string;
  format?: string | null | undefined;
  shortCircuit?: boolean;
}
type NextResolve = (specifier: string, context?: ResolveContext) => Resolved;
interface Loaded {
  format?: string | null | undefined;
  source?: string | ArrayBufferView | ArrayBuffer | null | undefined;
  shortCircuit?: boolean;
}
type NextLoad = (url: string, context?: object) => Loaded;
const node = nodeModule as typeof nodeModule & {
  registerHooks?: (hooks: {
    resolve: (specifier: string, context: ResolveContext, next: NextResolve) => Resolved;
    load: (url: string, context: object, next: NextLoad) => Loaded;
  }) => unknown;
  findPackageJSON?: (specifier: string) => string | undefined;
};

/** Node strips types itself (on by default from 22.18) and takes synchronous in-thread hooks. */
const NATIVE = Boolean((process.features as { typescript?: unknown }).typescript) && node.registerHooks !== undefined;

/** ESM by their extension, or by the nearest package.json's `"type": "module"`. */
const NATIVE_EXTENSIONS = new Set(['.ts', '.mts', '.js', '.mjs']);

/**
 * Whether Node's loader should try `file`: an ES module of a package that says so (or of no package
 * at all). A `.ts` file in a package.json without `"type"` would load too, with a warning about
 * reparsing printed to the user; Node refuses to strip types under node_modules; `.tsx`, `.cts` and
 * CommonJS are jiti's; so is TypeScript in an isolate, where the type stripper would be loaded for
 * this one plugin.
 */
function takesNativeImport(file: string, thread: 'host' | 'isolate', fresh: boolean): boolean {
  if (!NATIVE) return false;
  const ext = extname(file);
  if (!NATIVE_EXTENSIONS.has(ext)) return false;
  if (ext.endsWith('ts') && (thread === 'isolate' || file.includes(`${sep}node_modules${sep}`))) return false;
  if (ext.startsWith('.m')) return true;
  const dir = dirname(file);
  let esm = esmDirs.get(dir);
  if (esm === undefined || fresh) {
    const manifest = node.findPackageJSON?.(pathToFileURL(file).href);
    esm = manifest === undefined || packageType(manifest) === 'module';
    esmDirs.set(dir, esm);
  }
  return esm;
}

/**
 * Whether a directory's files are ES modules, by its package.json, asked once per directory: a
 * folder of many plugins would otherwise find and read the same package.json for each. A reload
 * (`fresh`) asks again, since the package.json may have been edited.
 */
const esmDirs = new Map<string, boolean>();

function packageType(manifest: string): unknown {
  try {
    return (readJsonFile(manifest) as { type?: unknown }).type;
  } catch {
    return undefined; // unreadable: Node would not load the file as ESM either
  }
}

/**
 * Whether the import failed in Node's loader (parsing, stripping, resolving, linking) rather than in
 * the plugin's code: such an error has no frame in the plugin. A CommonJS `.ts` file in an ESM
 * package does run, up to its first `require` or `module.exports`.
 */
function refusedByNode(error: unknown): boolean {
  return throwSite(error) === undefined || /is not defined in ES module scope/.test(messageOf(error));
}

/** The query parameter that gives a reloaded plugin's modules URLs of their own, so Node evaluates them again. */
const RELOAD_PARAM = 'rousseau-reload';
let reloads = 0;

function nativeUrl(file: string, fresh: boolean): string {
  registerResolveHook();
  const url = pathToFileURL(file);
  if (fresh) url.searchParams.set(RELOAD_PARAM, String(++reloads));
  return url.href;
}

let hooked = false;

/**
 * Once per thread (hooks registered with `registerHooks` are the thread's own): the host's aliases
 * for a plugin's imports, and a reload's query passed on from a module to its local imports, so an
 * edited helper is read again while typebox and other packages stay shared; and a TypeScript
 * module's text stripped from the cache when it was stripped before (stripped-cache.ts).
 */
function registerResolveHook(): void {
  if (hooked) return;
  hooked = true;
  const aliases = new Map(Object.entries(hostAliases()).map(([name, path]) => [name, pathToFileURL(path).href]));
  node.registerHooks!({
    resolve(specifier, context, next) {
      const parent = context.parentURL;
      if (!parent?.startsWith('file:') || isHostCode(fileURLToPath(parent))) return next(specifier, context);
      const alias = aliases.get(specifier);
      if (alias) return { url: alias, shortCircuit: true };
      const resolved = next(specifier, context);
      const reload = new URL(parent).searchParams.get(RELOAD_PARAM);
      if (!reload || !resolved.url.startsWith('file:') || resolved.url.includes('/node_modules/')) return resolved;
      const url = new URL(resolved.url);
      url.searchParams.set(RELOAD_PARAM, reload);
      return { ...resolved, url: url.href };
    },
    load(url, context, next) {
      const loaded = next(url, context);
      if (loaded.format !== 'module-typescript' || loaded.source == null) return loaded;
      // Node refuses to strip types under node_modules (a dependency, or where a symlinked plugin
      // leads), and the plugin goes to jiti: served stripped, it would run where Node said no.
      if (url.includes('/node_modules/')) return loaded;
      let stripped: string | undefined;
      try {
        stripped = strippedSource(loaded.source);
      } catch {
        // the cache's own trouble: Node strips the text as it would without one
      }
      return stripped === undefined ? loaded : { format: 'module', source: stripped, shortCircuit: true };
    },
  });
}

/** Keys of a plugin object: a module without a default export that has them is a CommonJS plugin. */
const PLUGIN_KEYS = ['name', 'tools', 'setup'];

/** The host's own code, whose frames are not the plugin's. */
const HOST_CODE = [join(PACKAGE_ROOT, 'core') + sep, join(PACKAGE_ROOT, 'dist') + sep];

function isHostCode(path: string): boolean {
  return HOST_CODE.some((dir) => path.startsWith(dir));
}

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
    // Anchored before the path: `node:internal/modules/...` frames are Node's, not a path.
    const frame = /[\s(]((?:file:\/\/)?\/[^()]*?):(\d+):(\d+)\)?\s*$/.exec(line);
    if (!frame) continue;
    const path = frame[1]!.startsWith('file:') ? fileURLToPath(frame[1]!) : frame[1]!;
    if (path.includes(`${sep}node_modules${sep}`) || isHostCode(path)) continue;
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
