/**
 * The loader: config entries → resolved specs → runners → contract check → registry.
 *
 * Every plugin loads on its own: one that cannot be resolved, fails to import, throws in `setup`,
 * breaks the contract, outlives its load timeout or collides on a name is marked `failed` with the
 * reason, and the others load. Plugins load concurrently; they register in config order, so which
 * of two colliding plugins wins never depends on timing.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkPlugin } from './check.ts';
import type { BuiltinEntryConfig, HostConfig, PluginEntryConfig } from './config-schema.ts';
import { HostError, hostError, messageOf } from './errors.ts';
import { Limiter } from './limiter.ts';
import type { AuditSink } from './audit.ts';
import type { Logger } from './log.ts';
import { DEFAULT_MAX_OUTPUT_BYTES } from './output.ts';
import type { PluginHandle, Registry, ToolDefinition } from './registry.ts';
import { FROM_SOURCE, hostFile } from './paths.ts';
import { plainData } from './safe-json.ts';
import { importPlugin } from './runners/import-plugin.ts';
import { createInlineRunner } from './runners/inline.ts';
import type { McpServerSpec, PluginRunner, PluginSpec } from './runners/runner.ts';
import { createIsolatedRunner } from './runners/isolated.ts';
import type { Isolation, Violation } from './types.ts';

export const DEFAULTS = {
  timeoutMs: 30_000,
  loadTimeoutMs: 10_000,
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
const EXTENSIONS = ['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'];

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
}

/** One config entry, normalised: what to load and with which settings. */
interface Entry {
  source: string;
  builtin: boolean;
  settings: Exclude<PluginEntryConfig, string> | (Exclude<BuiltinEntryConfig, string> & { module?: undefined });
}

/** Loads every plugin of the config into the registry. Never throws for a plugin's failure. */
export async function loadPlugins(ctx: LoadContext): Promise<void> {
  const entries = entriesOf(ctx.config);
  // Isolated plugins load in parallel (each in its own thread or process). Inline ones share this
  // thread, so they load one after another: each load timeout then measures that plugin alone.
  let inlineChain: Promise<unknown> = Promise.resolve();
  const loads = entries.map((entry) => {
    if (!runsInline(entry)) return loadOne(ctx, entry);
    const load = inlineChain.then(() => loadOne(ctx, entry));
    inlineChain = load;
    return load;
  });
  for (const load of loads) {
    const { handle, tools } = await load;
    if (handle.error) {
      ctx.registry.addFailed(handle);
      ctx.log.warn(`plugin ${handle.name} failed: ${handle.error.message}`);
      continue;
    }
    const collision = ctx.registry.add(handle, tools);
    if (collision) {
      ctx.log.warn(`plugin ${handle.name} failed: ${collision.message}`);
      await handle.runner?.close();
      delete handle.runner; // closed: host.close() must not dispose it twice
    } else {
      ctx.log.debug(
        `loaded plugin ${handle.name} (${tools.length} tools, ${handle.loadMs?.toFixed(1)} ms, ${handle.isolation})`,
      );
    }
  }
}

function runsInline(entry: Entry): boolean {
  return (
    !('mcp' in entry.settings && entry.settings.mcp) &&
    (entry.settings.isolation ?? (entry.builtin ? 'inline' : DEFAULTS.isolation)) === 'inline'
  );
}

function entriesOf(config: HostConfig): Entry[] {
  const builtins = config.builtins === false ? [] : (config.builtins ?? [...BUILTIN_PLUGINS]);
  const entries: Entry[] = builtins.map((b) => {
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

async function loadOne(ctx: LoadContext, entry: Entry): Promise<{ handle: PluginHandle; tools: ToolDefinition[] }> {
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
  const started = performance.now();
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
      ...(mcp
        ? { mcp: { ...mcp, name: handle.name, ...(mcp.command ? { cwd: resolve(ctx.dir, mcp.cwd ?? '.') } : {}) } }
        : {}),
    };
    handle.runner = await createRunner(ctx, spec, ctx.log.child({ plugin: entry.source }), entry.builtin);
    const loaded = plainData(await withLoadTimeout(handle.runner.load(), spec.loadTimeoutMs, entry.source));
    if (typeof loaded.plugin.name === 'string') handle.name = loaded.plugin.name;
    if (typeof loaded.plugin.version === 'string') handle.version = loaded.plugin.version;

    const violations = checkPlugin(file, loaded.plugin, loaded.tools, { lenient: mcp !== undefined });
    handle.warnings = [...(loaded.warnings ?? []), ...violations.filter((v) => v.severity === 'warning')];
    const errors = violations.filter((v) => v.severity === 'error');
    if (errors.length) throw contractError(handle.name, errors);
    handle.loadMs = performance.now() - started;
    return { handle, tools: (loaded.tools ?? []).map(toDefinition) };
  } catch (error) {
    handle.loadMs = performance.now() - started;
    handle.error =
      error instanceof HostError ? error : hostError('RH_ERR_PLUGIN_IMPORT', [entry.source, messageOf(error)], error);
    await handle.runner?.close();
    delete handle.runner;
    return { handle, tools: [] };
  }
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

/** Bundled built-ins import natively (no transpiling); from source they go through jiti like any plugin. */
async function importBuiltin(spec: PluginSpec): Promise<unknown> {
  try {
    if (FROM_SOURCE) return await importPlugin(spec.file);
    return ((await import(pathToFileURL(spec.file).href)) as { default: unknown }).default;
  } catch (error) {
    throw hostError('RH_ERR_PLUGIN_IMPORT', [spec.source, messageOf(error)], error);
  }
}

function withLoadTimeout<T>(loading: Promise<T>, ms: number, source: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(hostError('RH_ERR_PLUGIN_LOAD_TIMEOUT', [source, ms])), ms);
  });
  return Promise.race([loading, expired]).finally(() => clearTimeout(timer));
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
    if (!file) throw hostError('RH_ERR_PLUGIN_NOT_FOUND', [specifier, dir, `no file or package at ${target}`]);
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
    const file = resolvePackage(name, dir);
    if (file) return file;
  }
  throw hostError('RH_ERR_PLUGIN_NOT_FOUND', [
    specifier,
    dir,
    `no package ${candidates.map((c) => `"${c}"`).join(' or ')} in node_modules (install it, or write a path starting with ./)`,
  ]);
}

function resolveFile(target: string): string | undefined {
  if (existsSync(target) && statSync(target).isFile()) return target;
  for (const ext of EXTENSIONS) if (existsSync(target + ext)) return target + ext;
  if (existsSync(target) && statSync(target).isDirectory()) {
    const entry = packageEntry(target);
    if (entry) return entry;
    for (const ext of EXTENSIONS) if (existsSync(join(target, `index${ext}`))) return join(target, `index${ext}`);
  }
  return undefined;
}

/** Looks for `node_modules/<name>` from `dir` upward, and reads its entry point. */
function resolvePackage(name: string, dir: string): string | undefined {
  for (let d = resolve(dir); ; d = resolve(d, '..')) {
    const root = join(d, 'node_modules', name);
    if (existsSync(join(root, 'package.json'))) return packageEntry(root);
    if (resolve(d, '..') === d) return undefined;
  }
}

/** The entry of a package directory: `exports["."]` (import/default), then `module`, `main`. */
function packageEntry(root: string): string | undefined {
  const manifest = join(root, 'package.json');
  if (!existsSync(manifest)) return undefined;
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: unknown; module?: string; main?: string };
  const pick = (e: unknown): string | undefined => {
    if (typeof e === 'string') return e;
    if (Array.isArray(e)) return e.map(pick).find(Boolean);
    if (e && typeof e === 'object') {
      const o = e as Record<string, unknown>;
      if ('.' in o) return pick(o['.']);
      for (const cond of ['rousseau', 'import', 'node', 'default', 'require']) if (cond in o) return pick(o[cond]);
    }
    return undefined;
  };
  const rel = pick(pkg.exports) ?? pkg.module ?? pkg.main;
  return resolveFile(join(root, rel ?? 'index'));
}
