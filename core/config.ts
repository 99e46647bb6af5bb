/**
 * Finding, loading and validating the config (README.md, "Config reference").
 *
 * cosmiconfig 9 searches from the working directory up to the project root (the first directory
 * with a package.json); TypeScript configs load through jiti (cosmiconfig's own TS loader needs the
 * TypeScript compiler API, which TypeScript 7 no longer has). Every error names the file and the key.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, resolve, sep } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { Value } from 'typebox/value';
import { HostConfigSchema, type HostConfig } from './config-schema.ts';
import { HostError, hostError, messageOf } from './errors.ts';
import { requireJiti } from './jiti.ts';
import { segments } from './json-pointer.ts';
import { hostAliases } from './paths.ts';
import { schemaProblems } from './schema-errors.ts';
import { jsonTextTooLong, readJsonFile } from './json-text.ts';

export interface LoadedConfig {
  config: HostConfig;
  /** The file it came from; absent when none was found (built-ins only, default policy). */
  file?: string;
  /** Plugin paths resolve against this directory: the config file's, or the cwd. */
  dir: string;
}

const MODULE = 'rousseau';

/**
 * JSON a config file or package.json holds. cosmiconfig's loader (parse-json) answers `JSON.parse`'s
 * value too, and locates a syntax error with a code frame; it loads ten modules (@babel/code-frame
 * among them), so it reads only what `JSON.parse` refused, for that error.
 */
function parseJson<T>(file: string, content: string, located: (file: string, content: string) => T): T {
  try {
    return JSON.parse(content);
  } catch {
    try {
      return located(file, content);
    } catch (error) {
      // Its code frame is coloured wherever colours look supported (any CI=… among them): an error
      // message is plain text, read in logs, JSON and MCP answers.
      if (error instanceof Error) error.message = stripVTControlCharacters(error.message);
      throw error;
    }
  }
}

/**
 * The JavaScript configs this process has read, each with the CommonJS files (packages aside) its
 * reads brought into Node's require cache.
 */
const requiredBy = new Map<string, Set<string>>();

/** Finds the config from `cwd` upward, or loads `configFile`. */
export async function loadConfig({ cwd, configFile }: { cwd: string; configFile?: string }): Promise<LoadedConfig> {
  const { cosmiconfig, defaultLoaders, getDefaultSearchPlaces } = await import('cosmiconfig');
  // A plugin package's manifest (`"rousseau": { "plugin": … }`, as the template writes) is not a
  // host config: read as one, every command run in a plugin's folder failed on its `plugin` key.
  // Seen as holding no `rousseau` key, the search goes on to the folder's other config files.
  let manifest: string | undefined;
  const loadJson = async (file: string, content: string) => {
    const value = parseJson(file, boundedText(file, content), defaultLoaders['.json']);
    if (basename(file) !== 'package.json' || !declaresPlugin(value)) return value;
    // Host keys beside `plugin` would be dropped unsaid (a deny policy among them), the host run without them.
    const hostKeys = Object.keys(value.rousseau).filter((key) => Object.hasOwn(HostConfigSchema.properties, key));
    if (hostKeys.length > 0)
      throw hostError('RH_ERR_CONFIG_INVALID', [
        file,
        `  rousseau: names a plugin ("plugin", a plugin package's manifest) and holds host config too (${hostKeys.map((k) => JSON.stringify(k)).join(', ')}), which the host would not read there: move the host config to rousseau.config.json beside it`,
      ]);
    manifest = file;
    return {};
  };
  // jiti only for a TypeScript config: a JSON one, or none, does not pay its ~80 ms import.
  const loadTs = async (file: string) => {
    const { createJiti } = requireJiti();
    const jiti = createJiti(import.meta.url, { moduleCache: false, interopDefault: true, alias: hostAliases() });
    return jiti.import(file, { default: true });
  };
  // Node's loader keeps what it imported (a failure too) and would hand back the old text: the
  // first read of a JavaScript config in a process is Node's, any later one jiti's, from the text
  // now in the file, transpiled, with the ES modules it imports (jiti would leave an ES module to
  // Node's loader), and the CommonJS files the config required before taken out of Node's cache.
  // `add` and `remove` read back what they wrote, and an embedder's new host after an edit gets the
  // policy the file says now.
  const loadJs = async (file: string, content: string) => {
    const cache = createRequire(import.meta.url).cache;
    const required = requiredBy.get(file);
    for (const id of required ?? []) delete cache[id];
    const before = new Set(Object.keys(cache));
    try {
      if (!required) return await defaultLoaders['.js'](file, content);
      const { createJiti } = requireJiti();
      const jiti = createJiti(file, { moduleCache: false, interopDefault: true, alias: hostAliases() });
      const exported = jiti.evalModule(content, { filename: file, async: false, forceTranspile: true });
      return (exported as { default?: unknown } | null)?.default ?? exported;
    } finally {
      const added = Object.keys(cache).filter((id) => !before.has(id) && !id.includes(`${sep}node_modules${sep}`));
      requiredBy.set(file, new Set([...(required ?? []), ...added]));
    }
  };
  const searchPlaces = [
    ...getDefaultSearchPlaces(MODULE),
    ...['mts', 'cts', 'json', 'yaml', 'yml'].map((ext) => `${MODULE}.config.${ext}`),
  ];
  const explorer = cosmiconfig(MODULE, {
    searchStrategy: 'project',
    searchPlaces,
    loaders: {
      '.json': loadJson,
      '.yaml': (file, content) => defaultLoaders['.yaml'](file, boundedText(file, content)),
      '.yml': (file, content) => defaultLoaders['.yml'](file, boundedText(file, content)),
      noExt: (file, content) => defaultLoaders.noExt(file, boundedText(file, content)),
      '.js': loadJs,
      '.mjs': loadJs,
      '.cjs': loadJs,
      '.ts': loadTs,
      '.mts': loadTs,
      '.cts': loadTs,
    },
  });

  let found: { config: unknown; filepath: string; isEmpty?: boolean } | null;
  if (configFile) {
    const file = resolve(cwd, configFile);
    if (!existsSync(file)) throw hostError('RH_ERR_CONFIG_NOT_FOUND', [file]);
    try {
      found = await explorer.load(file);
    } catch (error) {
      if (error instanceof HostError) throw error;
      throw hostError('RH_ERR_CONFIG_LOAD', [file, messageOf(error)], error);
    }
    // A file named on purpose that holds no config must not leave the host on none, unsaid.
    if (!found)
      throw hostError('RH_ERR_CONFIG_INVALID', [
        file,
        manifest === file
          ? `  (root): a plugin package's manifest ("rousseau": { "plugin": … }), not a host config: name the host's config file (rousseau.config.json), or leave out --config`
          : '  (root): holds no "rousseau" key: put the host config under it, or name the host\'s config file',
      ]);
  } else {
    try {
      found = await explorer.search(cwd);
    } catch (error) {
      if (error instanceof HostError) throw error;
      const file = (error as { filepath?: string }).filepath ?? cwd;
      throw hostError('RH_ERR_CONFIG_LOAD', [file, messageOf(error)], error);
    }
  }
  if (!found) return { config: {}, dir: cwd };
  if (!configFile) {
    // The search reads the first config of a folder in its order (package.json first): another
    // beside it, the one the user edits perhaps, would go unread without a word.
    const others = searchPlaces
      .map((place) => resolve(dirname(found.filepath), place))
      .filter((file) => file !== found.filepath && existsSync(file) && holdsConfig(file));
    if (others.length > 0)
      throw hostError('RH_ERR_CONFIG_INVALID', [
        found.filepath,
        `  (root): another host config is beside it, which would go unread (${others.join(', ')}): keep one`,
      ]);
  }
  const raw = found.isEmpty ? {} : found.config;
  return { config: validateConfig(raw, found.filepath), file: found.filepath, dir: dirname(found.filepath) };
}

/** A config file's text, refused before it is parsed when over the bound on JSON text (json-text.ts). */
function boundedText(file: string, content: string): string {
  const tooLong = jsonTextTooLong(content.length);
  if (tooLong) throw hostError('RH_ERR_CONFIG_LOAD', [file, `it holds ${tooLong}`]);
  return content;
}

/** Whether a file found beside the config is one too: a package.json only when its `rousseau` is host config. */
function holdsConfig(file: string): boolean {
  if (basename(file) !== 'package.json') return true;
  try {
    const manifest = readJsonFile(file) as { rousseau?: unknown } | null;
    return manifest?.rousseau !== undefined && !declaresPlugin(manifest);
  } catch {
    return false; // not JSON: the search would have failed on it first, had it come first
  }
}

/** A package manifest that names its plugin (`"rousseau": { "plugin": "./src/index.ts" }`): a plugin package. */
export function declaresPlugin(manifest: unknown): boolean {
  const rousseau = (manifest as { rousseau?: unknown } | null)?.rousseau;
  return (
    typeof rousseau === 'object' && rousseau !== null && typeof (rousseau as { plugin?: unknown }).plugin === 'string'
  );
}

/**
 * Validates a config object; the error lists every problem as `file: key.path: message`. A process
 * checks its config once (again at a reload), so the schema is interpreted, not compiled: compiling
 * it cost a start-up several times the check.
 */
export function validateConfig(raw: unknown, origin: string): HostConfig {
  if (Value.Check(HostConfigSchema, raw)) {
    checkPluginEntries(raw, origin);
    return raw;
  }
  const problems = schemaProblems(Value.Errors(HostConfigSchema, raw), raw, HostConfigSchema).map(
    (p) => `  ${keyPath(p.pointer) || '(root)'}: ${p.message}`,
  );
  throw hostError('RH_ERR_CONFIG_INVALID', [origin, problems.join('\n')]);
}

/** `/plugins/1/timeoutMs` → `plugins[1].timeoutMs`. */
export function keyPath(pointer: string): string {
  return segments(pointer).reduce(
    (path, seg) => (/^\d+$/.test(seg) ? `${path}[${seg}]` : path ? `${path}.${seg}` : seg),
    '',
  );
}

/** Rules the schema cannot say: a plugin entry object names exactly one of `module` and `mcp`. */
function checkPluginEntries(config: HostConfig, origin: string): void {
  const problems: string[] = [];
  config.plugins?.forEach((entry, i) => {
    if (typeof entry === 'string') return;
    const hasModule = entry.module !== undefined;
    const hasMcp = entry.mcp !== undefined;
    if (hasModule === hasMcp)
      problems.push(`  plugins[${i}]: give exactly one of "module" (a path or package) and "mcp" (a server)`);
    if (hasMcp && !entry.name) problems.push(`  plugins[${i}].name: an MCP plugin needs a name`);
    if (hasMcp && (entry.mcp!.command === undefined) === (entry.mcp!.url === undefined)) {
      problems.push(`  plugins[${i}].mcp: give exactly one of "command" (stdio) and "url" (HTTP)`);
    }
  });
  if (problems.length) throw hostError('RH_ERR_CONFIG_INVALID', [origin, problems.join('\n')]);
}
