/**
 * The loader: config entries → resolved specs → runners → contract check → registry.
 *
 * Every plugin loads on its own: one that cannot be resolved, fails to import, throws in `setup`,
 * breaks the contract, outlives its load timeout or collides on a name is marked `failed` with the
 * reason, and the others load. Plugins load concurrently; they register in config order, each as
 * soon as it and every plugin before it are in, so which of two colliding plugins wins never
 * depends on timing (docs/mcp.md, "Start-up").
 */
import { existsSync, type Stats, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { abortable } from './abortable.ts';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Jiti } from 'jiti';
import { checkPlugin } from './check.ts';
import type { BuiltinEntryConfig, HostConfig, PluginEntryConfig } from './config-schema.ts';
import { HostError, hostError, loadTimeoutError, messageOf } from './errors.ts';
import { Limiter } from './limiter.ts';
import type { AuditSink } from './audit.ts';
import type { Logger } from './log.ts';
import { DEFAULT_MAX_OUTPUT_BYTES } from './output.ts';
import type { PluginHandle, Registry, ToolDefinition } from './registry.ts';
import { requireJiti } from './jiti.ts';
import { FROM_SOURCE, hostFile } from './paths.ts';
import { plainData } from './safe-json.ts';
import { type ImportedPlugin, importPlugin } from './runners/import-plugin.ts';
import { createInlineRunner } from './runners/inline.ts';
import type { McpServerSpec, PluginRunner, PluginSpec } from './runners/runner.ts';
import { createIsolatedRunner } from './runners/isolated.ts';
import type { Isolation, Violation } from './types.ts';
import { readJsonFile } from './json-text.ts';

/** How long a plugin may take to load, unless its entry says otherwise. */
const DEFAULT_LOAD_TIMEOUT_MS = 10_000;

const DEFAULTS = {
  timeoutMs: 30_000,
  loadTimeoutMs: DEFAULT_LOAD_TIMEOUT_MS,
  maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES,
  maxConcurrency: 32,
  maxQueue: 256,
  memoryMb: 128,
  /** Plugins that are not built in. */
  isolation: 'worker' as Isolation,
  /** VS Code's crash budget for its extension host: 3 in 5 minutes. */
  quarantine: { failures: 3, windowMs: 300_000, cooldownMs: 60_000 },
};

const BUILTIN_PLUGINS = ['fs', 'shell', 'http'] as const;

export interface LoadContext {
  config: HostConfig;
  /** Plugin paths resolve against this directory. */
  dir: string;
  workspace: string;
  registry: Registry;
  log: Logger;
  logLevel: string;
  /** Where isolated runners record crashes, timeouts and quarantines. */
  audit?: AuditSink;
  /** The clock of isolated runners' crash budgets (`HostOptions.clock`). */
  clock?: () => number;
  /**
   * Makes the runner of an MCP-server plugin. Passed in by the host: MCP sits above the loader,
   * which must not import it (a host without it fails MCP entries with a clear reason).
   */
  mcpRunner?: (spec: PluginSpec & { mcp: McpServerSpec }, log: Logger, audit?: AuditSink) => PluginRunner;
  /** Called as each plugin's tools enter the registry, while the others still load. */
  onRegistered?: () => void;
  /** The host's close: a load still under way gives up (its runner closed) rather than be waited out. */
  signal?: AbortSignal;
}

/** One config entry, normalised: what to load and with which settings. */
export interface PluginEntry {
  source: string;
  builtin: boolean;
  settings: Exclude<PluginEntryConfig, string> | (Exclude<BuiltinEntryConfig, string> & { module?: undefined });
}

/** A plugin loaded (or failed, with its reason on the handle), not yet registered. */
export interface LoadedEntry {
  handle: PluginHandle;
  tools: ToolDefinition[];
}

/**
 * Loads every plugin of the config into the registry. Never throws for a plugin's failure.
 * Returns the entries in the registry's order: one handle per entry, the i-th handle from the i-th entry.
 */
export async function loadPlugins(ctx: LoadContext): Promise<PluginEntry[]> {
  const entries = entriesOf(ctx.config);
  for (const load of loadEntries(ctx, entries)) {
    const { handle, tools } = await load;
    if (handle.error) {
      ctx.registry.addFailed(handle);
      if (!ctx.signal?.aborted) ctx.log.warn(`plugin ${handle.name} failed: ${handle.error.message}`);
      continue;
    }
    const collision = ctx.registry.add(handle, tools);
    if (collision) {
      ctx.log.warn(`plugin ${handle.name} failed: ${collision.message}`);
      await handle.runner?.close();
      delete handle.runner; // closed: host.close() must not dispose it twice
    } else {
      ctx.onRegistered?.();
      ctx.log.debug(
        `loaded plugin ${handle.name} (${tools.length} tools, ${handle.loadMs?.toFixed(1)} ms, ${handle.isolation}${handle.loader ? `, ${handle.loader} import` : ''})`,
      );
    }
  }
  return entries;
}

/**
 * Starts loading each entry. Isolated plugins load in parallel (each in its own thread or process).
 * Inline ones share this thread, so they load one after another: each load timeout then measures
 * that plugin alone.
 */
export function loadEntries(ctx: LoadContext, entries: readonly PluginEntry[], fresh = false): Promise<LoadedEntry>[] {
  let inlineChain: Promise<unknown> = Promise.resolve();
  return entries.map((entry) => {
    if (!runsInline(entry)) return loadPlugin(ctx, entry, fresh);
    const load = inlineChain.then(() => loadPlugin(ctx, entry, fresh));
    inlineChain = load;
    return load;
  });
}

function runsInline(entry: PluginEntry): boolean {
  return (
    !('mcp' in entry.settings && entry.settings.mcp) &&
    (entry.settings.isolation ?? (entry.builtin ? 'inline' : DEFAULTS.isolation)) === 'inline'
  );
}

function entriesOf(config: HostConfig): PluginEntry[] {
  const builtins = config.builtins === false ? [] : (config.builtins ?? [...BUILTIN_PLUGINS]);
  const entries: PluginEntry[] = builtins.map((b) => {
    const settings = typeof b === 'string' ? { name: b } : b;
    return { source: `builtin:${settings.name}`, builtin: true, settings };
  });
  for (const p of config.plugins ?? []) {
    const settings = typeof p === 'string' ? { module: p } : p;
    if (settings.enabled === false) continue;
    entries.push({ source: settings.module ?? `mcp:${settings.name}`, builtin: false, settings });
  }
  return entries;
}

/**
 * Loads one entry: resolve, start its runner, check the contract. Never throws: a failure is the
 * handle's `error`, its runner closed. `fresh` (a reload) imports the module and its local imports anew.
 */
async function loadPlugin(ctx: LoadContext, entry: PluginEntry, fresh = false): Promise<LoadedEntry> {
  const s = entry.settings;
  const mcp = 'mcp' in s ? s.mcp : undefined;
  // An MCP server runs in its own process (or behind a URL) whatever `isolation` says.
  const isolation: Isolation = mcp ? 'process' : (s.isolation ?? (entry.builtin ? 'inline' : DEFAULTS.isolation));
  const handle: PluginHandle = {
    name: ('name' in s && s.name) || entry.source,
    source: entry.source,
    isolation,
    limiter: new Limiter(s.maxConcurrency ?? DEFAULTS.maxConcurrency, s.maxQueue ?? DEFAULTS.maxQueue),
    timeoutMs: s.timeoutMs ?? DEFAULTS.timeoutMs,
    maxOutputBytes: s.maxOutputBytes ?? DEFAULTS.maxOutputBytes,
    warnings: [],
  };
  const started = process.hrtime.bigint();
  try {
    const file = entry.builtin ? builtinFile(handle.name) : mcp ? entry.source : resolvePlugin(entry.source, ctx.dir);
    if (!mcp) handle.file = file;
    const spec: PluginSpec = {
      source: entry.source,
      file,
      options: s.options,
      isolation,
      workspace: ctx.workspace,
      loadTimeoutMs: s.loadTimeoutMs ?? DEFAULTS.loadTimeoutMs,
      memoryMb: s.memoryMb ?? DEFAULTS.memoryMb,
      quarantine: { ...DEFAULTS.quarantine, ...ctx.config.isolation?.quarantine },
      ...(ctx.clock ? { clock: ctx.clock } : {}),
      logLevel: ctx.logLevel,
      ...(fresh ? { fresh } : {}),
      ...(mcp
        ? { mcp: { ...mcp, name: handle.name, ...(mcp.command ? { cwd: resolve(ctx.dir, mcp.cwd ?? '.') } : {}) } }
        : {}),
    };
    handle.runner = await createRunner(ctx, spec, ctx.log.child({ plugin: entry.source }), entry.builtin);
    const report = await withLoadTimeout(handle.runner.load(), spec, entry.source, ctx.signal);
    // An inline report is made in this thread as plain data (plugin-report.ts); the others arrive by
    // structured clone or from an MCP server, with shared references and ordinary prototypes.
    const loaded = handle.runner.isolation === 'inline' ? report : plainData(report);
    if (typeof loaded.plugin.name === 'string') handle.name = loaded.plugin.name;
    if (typeof loaded.plugin.version === 'string') handle.version = loaded.plugin.version;
    if (loaded.loader) handle.loader = loaded.loader;

    const violations = checkPlugin(file, loaded.plugin, loaded.tools, { lenient: mcp !== undefined });
    handle.warnings = [...(loaded.warnings ?? []), ...violations.filter((v) => v.severity === 'warning')];
    const errors = violations.filter((v) => v.severity === 'error');
    if (errors.length) throw contractError(handle.name, errors);
    handle.loadMs = msSince(started);
    return { handle, tools: (loaded.tools ?? []).map(toDefinition) };
  } catch (error) {
    handle.loadMs = msSince(started);
    handle.error = ctx.signal?.aborted
      ? hostError('RH_ERR_HOST_CLOSED', [])
      : error instanceof HostError
        ? error
        : hostError('RH_ERR_PLUGIN_IMPORT', [entry.source, messageOf(error)], error);
    await handle.runner?.close();
    delete handle.runner;
    return { handle, tools: [] };
  }
}

/**
 * Milliseconds since `started` (`process.hrtime.bigint()`). Not `performance.now()`: the first read
 * of the global `performance` loads `perf_hooks` whole (ten modules), which a command that only
 * loads plugins (`tools`, `check`, a server until its first call) has no other use for.
 */
function msSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e6;
}

function contractError(name: string, violations: Violation[]): HostError & { violations: Violation[] } {
  const lines = violations.map(
    (v) => `  ${v.file}${v.tool ? ` tool "${v.tool}"` : ''} at ${v.pointer || '/'}: ${v.message}`,
  );
  return Object.assign(hostError('RH_ERR_PLUGIN_CONTRACT', [name, lines.join('\n')]), { violations });
}

function toDefinition(t: NonNullable<Awaited<ReturnType<PluginRunner['load']>>['tools']>[number]): ToolDefinition {
  return {
    name: t.name as string,
    description: t.description as string,
    inputSchema: t.inputSchema as Record<string, unknown>,
    ...(t.outputSchema ? { outputSchema: t.outputSchema as Record<string, unknown> } : {}),
    ...(t.annotations ? { annotations: t.annotations as ToolDefinition['annotations'] } : {}),
    ...(typeof t.timeoutMs === 'number' ? { timeoutMs: t.timeoutMs } : {}),
  };
}

async function createRunner(ctx: LoadContext, spec: PluginSpec, log: Logger, builtin: boolean): Promise<PluginRunner> {
  const { audit } = ctx;
  if (spec.mcp) {
    if (!ctx.mcpRunner)
      throw hostError('RH_ERR_MCP_CONNECT', [
        spec.source,
        'no MCP client was given to the loader (createHost passes one)',
      ]);
    return ctx.mcpRunner({ ...spec, mcp: spec.mcp }, log, audit);
  }
  switch (spec.isolation) {
    case 'inline':
      // Built-ins are part of the host: a native import, no transpiling.
      return createInlineRunner(spec, log, builtin ? await importBuiltin(spec) : undefined);
    case 'worker':
    case 'process':
      return createIsolatedRunner(spec, log, audit);
  }
}

/** Bundled built-ins import natively (no transpiling); from source they load like any plugin. */
async function importBuiltin(spec: PluginSpec): Promise<ImportedPlugin> {
  try {
    if (FROM_SOURCE) return await importPlugin(spec.file);
    return {
      exported: ((await import(pathToFileURL(spec.file).href)) as { default: unknown }).default,
      loader: 'native',
    };
  } catch (error) {
    throw hostError('RH_ERR_PLUGIN_IMPORT', [spec.source, messageOf(error)], error);
  }
}

function withLoadTimeout<T>(
  loading: Promise<T>,
  { loadTimeoutMs, mcp }: Pick<PluginSpec, 'loadTimeoutMs' | 'mcp'>,
  source: string,
  signal?: AbortSignal,
): Promise<T> {
  return abortable(loading, {
    timeoutMs: loadTimeoutMs,
    signal,
    onTimeout: () => loadTimeoutError(source, loadTimeoutMs, mcp !== undefined),
  });
}

/** The module of a built-in plugin: its source under tsx, its bundle in dist/. */
function builtinFile(name: string): string {
  return hostFile(`plugins/${name}/index.ts`, `plugins/${name}.js`);
}

/**
 * A path (relative to the config's directory, or absolute) or a package name. A bare name that is
 * not installed is tried as `rousseau-plugin-<name>` too, the way ESLint and Babel resolve plugins.
 */
export function resolvePlugin(specifier: string, dir: string): string {
  if (specifier.startsWith('.') || isAbsolute(specifier)) {
    const target = resolve(dir, specifier);
    const file = resolveFile(target);
    if (!file)
      throw hostError('RH_ERR_PLUGIN_NOT_FOUND', [
        specifier,
        dir,
        statOf(target)?.isDirectory() ? noEntry(target) : `no file or package at ${target}`,
      ]);
    return file;
  }
  const candidates = [specifier];
  if (!specifier.includes('rousseau-plugin')) {
    candidates.push(
      specifier.startsWith('@')
        ? specifier.replace(
            /^(@[^/]+)(?:\/(.+))?$/,
            (_, scope: string, rest?: string) => `${scope}/rousseau-plugin${rest ? `-${rest}` : ''}`,
          )
        : `rousseau-plugin-${specifier}`,
    );
  }
  for (const name of candidates) {
    const root = packageRoot(name, dir);
    if (root === undefined) continue;
    const file = packageEntry(root);
    // An installed package whose entry is missing is a broken package, not a missing one.
    if (!file) throw hostError('RH_ERR_PLUGIN_NOT_FOUND', [specifier, dir, noEntry(root)]);
    return file;
  }
  // `check p/tool.ts` names a file that is there: a bare specifier is a package name, so say how to mean the file.
  const hint = resolveFile(resolve(dir, specifier))
    ? `; there is a file or folder ${specifier} here: write ./${specifier} to load it`
    : ' (install it, or write a path starting with ./)';
  throw hostError('RH_ERR_PLUGIN_NOT_FOUND', [
    specifier,
    dir,
    `no package ${candidates.map((c) => `"${c}"`).join(' or ')} in node_modules${hint}`,
  ]);
}

function resolveFile(target: string): string | undefined {
  const stats = statOf(target);
  if (stats?.isFile()) return target;
  if (stats?.isDirectory()) return packageEntry(target) ?? esmResolve(join(target, 'index'));
  return esmResolve(target);
}

/** A path's stats, or undefined where none can be read (missing, under a file, not permitted). */
function statOf(target: string): Stats | undefined {
  try {
    return statSync(target);
  } catch {
    return undefined;
  }
}

/** Node's own lookup of a bare name from `dir` (each `node_modules` upward): the package's directory. */
function packageRoot(name: string, dir: string): string | undefined {
  const paths = createRequire(join(resolve(dir), 'noop.js')).resolve.paths(name) ?? [];
  return paths.map((base) => join(base, name)).find((root) => existsSync(join(root, 'package.json')));
}

/**
 * Why a folder that is there gives no module: a newcomer who points the config at a project, or
 * renames the file `rousseau.plugin` names, needs to hear what was looked for, not that nothing is there.
 */
function noEntry(root: string): string {
  const manifest = join(root, 'package.json');
  if (!existsSync(manifest)) return `${root} is a folder with no package.json and no index file`;
  const plugin = manifestOf(manifest).rousseau?.plugin;
  if (typeof plugin === 'string')
    return `${manifest} names its plugin "rousseau": { "plugin": "${plugin}" }, and there is no file at ${resolve(root, plugin)}`;
  return `${manifest} leads to no module: no "rousseau": { "plugin": "./src/index.ts" }, "exports", "module" or "main" names a file there, and there is no index file beside it`;
}

/** The conditions a plugin package's `exports` are read with: `rousseau` first, for a package that is also something else. */
const CONDITIONS = ['rousseau', 'import', 'node', 'default'];

/**
 * The plugin of a package directory: where its package.json says (`"rousseau": { "plugin": … }`),
 * else its `exports` as an import would read them, else `module`, `main`, `index`.
 */
function packageEntry(root: string): string | undefined {
  const manifest = join(root, 'package.json');
  if (!existsSync(manifest)) return undefined;
  const pkg = manifestOf(manifest);
  if (typeof pkg.rousseau?.plugin === 'string') return resolveFile(resolve(root, pkg.rousseau.plugin));
  if (pkg.exports !== undefined && typeof pkg.name === 'string') {
    // A package resolves its own name through its own `exports` (self-reference), installed or not.
    const entry = esmResolve(pkg.name, pathToFileURL(manifest).href);
    if (entry) return entry;
  }
  const main = [pkg.module, pkg.main].find((m): m is string => typeof m === 'string');
  return esmResolve(join(root, main ?? 'index'));
}

/** What the loader reads of a plugin package's package.json. */
interface PackageManifest {
  name?: unknown;
  exports?: unknown;
  module?: unknown;
  main?: unknown;
  rousseau?: { plugin?: unknown };
}

function manifestOf(manifest: string): PackageManifest {
  return readJsonFile(manifest) as PackageManifest;
}

// jiti costs ~100 ms to import: loaded on first use (it is CommonJS, so synchronously), never by a
// host whose plugins are files Node imports itself.
let resolver: Jiti | undefined;

/** jiti's resolution (Node's rules, plus the TypeScript extensions): a file path, or undefined. */
function esmResolve(id: string, parentURL?: string): string | undefined {
  resolver ??= requireJiti().createJiti(import.meta.url);
  const url = resolver.esmResolve(isAbsolute(id) ? pathToFileURL(id).href : id, {
    conditions: CONDITIONS,
    try: true,
    ...(parentURL ? { parentURL } : {}),
  });
  return url?.startsWith('file:') ? fileURLToPath(url) : undefined;
}
