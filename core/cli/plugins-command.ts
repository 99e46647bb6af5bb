/**
 * `rousseau-host add SPEC` and `remove NAME`: install a plugin package with npm and list it in the
 * config, or the reverse. SPEC is anything `npm install` takes (a name, a tarball, a folder, a git
 * URL); the config is edited in place (config-edit.ts), or the line to write is printed when it
 * cannot be edited safely. npm's own output goes to stderr: stdout is for `--json` only.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { declaresPlugin } from '../config.ts';
import { hostError, messageOf } from '../errors.ts';
import {
  EXIT,
  hostFromFlags,
  parseJsonFlag,
  print,
  printError,
  printJson,
  UsageError,
  type Command,
  type Values,
} from './command.ts';
import { addEntry, entryModule, entrySource, type McpEntry, type PluginEntry, removeEntry } from './config-edit.ts';
import { CONFIG_TEMPLATE } from './init.ts';
import { hostCommand } from './host-command.ts';
import { readJsonFile } from '../json-text.ts';

const ISOLATIONS = ['inline', 'worker', 'process'];
const TARBALL = /\.(?:tgz|tar\.gz|tar)$/;
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

export const add: Command = {
  name: 'add',
  summary:
    'Install a plugin package (npm name, tarball, folder or git URL, as npm install takes them) and add it to the config (one is created when there is none). A plugin file, or a folder inside the project, is added by its path, not installed.',
  usage: 'add SPEC [--isolation inline|worker|process] [--options JSON] [--dry-run] [--json]',
  options: { isolation: { type: 'string' }, options: { type: 'string' }, 'dry-run': { type: 'boolean' } },
  async run({ values, positionals }) {
    const [spec, ...rest] = positionals;
    if (!spec || rest.length)
      throw new UsageError('add takes exactly one SPEC (a package name, tarball, folder or git URL)');
    notAnOption('SPEC', spec);
    const isolation = values.isolation;
    if (isolation !== undefined && (typeof isolation !== 'string' || !ISOLATIONS.includes(isolation)))
      throw new UsageError(`--isolation must be one of ${ISOLATIONS.join(', ')}; got "${String(isolation)}"`);
    const options = typeof values.options === 'string' ? parseJsonFlag('--options', values.options) : undefined;
    const dryRun = values['dry-run'] === true;

    const project = await projectOf(values);
    const npmSpec = npmSpecifier(spec, project.cwd, project.dir);
    const file = project.file ?? join(project.dir, 'rousseau.config.ts');
    const local = resolve(project.dir, npmSpec);
    const asPath = addedByPath(npmSpec, local, project.dir);
    const { name, version } = asPath?.file
      ? { name: modulePath(dirname(file), local), version: undefined }
      : await packageOf(npmSpec, project.dir);
    // What the new entry names: a plugin added by its path is named by it, from the config's folder.
    const entryModule = asPath ? modulePath(dirname(file), local) : name;
    const entry: PluginEntry =
      isolation === undefined && options === undefined
        ? entryModule
        : { module: entryModule, ...(isolation ? { isolation } : {}), ...(options === undefined ? {} : { options }) };
    // The folder may be listed already by its path (the line the scaffolder prints): an entry by
    // package name beside it would load the same plugin twice, and the second would fail as a duplicate.
    const listedAs = project.modules.includes(name) ? undefined : await listedByPath(npmSpec, project);

    if (!dryRun && listedAs === undefined) {
      if (!asPath) {
        if (!existsSync(join(project.dir, 'package.json'))) {
          // Without one, npm would install into the nearest parent that has one.
          writeFileSync(join(project.dir, 'package.json'), '{ "private": true }\n', { flag: 'wx' });
        }
        await npm(['install', '--save', '--no-audit', '--no-fund', npmSpec], project.dir);
      }
      const folder = asPath ? local : join(project.dir, 'node_modules', name);
      const manifest = asPath?.file ? undefined : readManifest(join(folder, 'package.json'));
      const unclaimed = manifest && !isPluginPackage(manifest) ? manifest : undefined;
      const server = unclaimed && mcpServerEntry(name, unclaimed, folder, !asPath, dirname(file));
      if (server)
        return notAPlugin(
          values,
          { name, ...(version ? { version } : {}), spec: npmSpec, config: file, installed: !asPath },
          server,
        );
      if (unclaimed)
        printError(
          `rousseau-host: ${name} does not say it is a plugin (no "rousseau": { "plugin": … } in its package.json, no "rousseau-plugin" keyword); adding it anyway`,
        );
    }

    const listed = listedAs !== undefined || project.modules.includes(name) || project.modules.includes(entryModule);
    const before = project.file ? readFileSync(file, 'utf8') : CONFIG_TEMPLATE;
    const edit = listed ? { text: before } : addEntry(file, before, entry);
    const line = `plugins: [${entrySource(entry, file)}]`;
    const report = {
      name,
      ...(version ? { version } : {}),
      spec: npmSpec,
      entry,
      config: file,
      created: !project.file,
      installed: !dryRun && listedAs === undefined && !asPath,
      dryRun,
      listed,
      ...(listedAs === undefined ? {} : { listedAs }),
    };
    if ('reason' in edit)
      return cannotEdit(values, report, file, edit.reason, `add ${entrySource(entry, file)} to its plugins`, line);
    if (!dryRun && !listed) {
      const problem = await writeChecked(file, before, edit.text, project.file === undefined, (modules) =>
        modules.includes(entryModule),
      );
      if (problem)
        return cannotEdit(values, report, file, problem, `add ${entrySource(entry, file)} to its plugins`, line);
    }
    // What was just added is loaded once, as the config now says: a plugin that fails the contract
    // check, its options, or beside the plugins already there is said to fail here, not first at `tools`.
    const failure = !dryRun && !listed ? await loadFailure(values, project.dir, file, entryModule) : undefined;
    if (values.json) printJson(failure ? { ...report, loads: false, error: failure } : report);
    else {
      const source = entrySource(entry, file);
      const host = hostCommand(project.dir);
      const created = project.file ? '' : dryRun ? ' (it would be created)' : ' (created)';
      print(
        [
          ...(listedAs !== undefined
            ? [`${name} is already in ${file}, by its path: "${listedAs}" (nothing installed, nothing added)`]
            : [
                asPath
                  ? `${name}${version ? `@${version}` : ''} is ${asPath.why}: listed by its path, not installed`
                  : dryRun
                    ? `Would run: npm install ${npmSpec}  (in ${project.dir})`
                    : `Installed ${name}${version ? `@${version}` : ''}`,
                listed
                  ? `${name} is already in ${file}`
                  : `${dryRun ? 'Would add' : 'Added'} ${source} to the plugins of ${file}${created}`,
              ]),
          ...(dryRun || failure ? [] : [`Next: ${host} tools`]),
        ].join('\n'),
      );
      // The entry already there stays as written: flags that would have shaped a new one are not
      // silently dropped.
      if (listed && entry !== entryModule)
        printError(
          `rousseau-host: ${name} is already in ${file}; its entry there was left as it is, without ${[isolation === undefined ? '' : '--isolation', options === undefined ? '' : '--options'].filter(Boolean).join(' and ')}: edit it there`,
        );
      if (failure) {
        const fix = loadFix(failure.code, { file, name, host, ...(asPath?.file === false ? { folder: local } : {}) });
        printError(
          `rousseau-host: ${name} is added, but it does not load: ${failure.code}: ${failure.message.replace(/\n/g, '\n  ')}\n${fix}, or take it out: ${host} remove ${entryModule}`,
        );
      }
    }
    return failure ? EXIT.failure : EXIT.ok;
  },
};

/**
 * What to do about the plugin just added (`name`, in `file`) that fails to load with `code`. `folder`
 * is the plugin's folder when it was added by its path, not installed: its own node_modules serves it.
 */
function loadFix(code: string, added: { file: string; name: string; host: string; folder?: string }): string {
  // Options the plugin refuses are the config's to fix, not the plugin's.
  if (code === 'RH_ERR_PLUGIN_OPTIONS') return `Fix its options in ${added.file} (the entry of ${added.name})`;
  if (code === 'RH_ERR_PLUGIN_IMPORT' && added.folder !== undefined && !existsSync(join(added.folder, 'node_modules')))
    return `Install its dependencies (npm install in ${added.folder}: a folder listed by its path imports from its own node_modules)`;
  if (code === 'RH_ERR_TOOL_COLLISION' || code === 'RH_ERR_PLUGIN_DUPLICATE')
    return 'Rename the tool or plugin in one of the two (names are global)';
  return `Fix the plugin (\`${added.host} check\` in its folder says what)`;
}

/**
 * Why the plugin just added (the config's entry `name`) does not load, or undefined when it loads.
 * The whole config is loaded once, as `tools` loads it: a tool or plugin name that another entry or
 * a built-in already holds fails the new entry, and that is said here, not first at `tools`.
 */
async function loadFailure(
  values: Values,
  dir: string,
  file: string,
  name: string,
): Promise<{ code: string; message: string } | undefined> {
  const host = await hostFromFlags(values, {
    cwd: dir,
    configFile: file,
    audit: false,
    // The failure is this command's to tell: the loader's own log line about it stays quiet.
    ...(values['log-level'] === undefined ? { logLevel: 'error' } : {}),
  });
  const plugin = host.plugins().find((p) => p.source === name);
  await host.close();
  return plugin?.status === 'loaded' || !plugin?.error
    ? undefined
    : { code: plugin.error.code, message: plugin.error.message };
}

export const remove: Command = {
  name: 'remove',
  summary: 'Take a plugin out of the config, and uninstall its package when the project depends on it.',
  usage: 'remove NAME [--dry-run] [--json]',
  options: { 'dry-run': { type: 'boolean' } },
  async run({ values, positionals }) {
    const [given, ...rest] = positionals;
    if (!given || rest.length)
      throw new UsageError('remove takes exactly one NAME (the module the config lists; x for rousseau-plugin-x)');
    notAnOption('NAME', given);
    const dryRun = values['dry-run'] === true;
    const project = await projectOf(values);
    // `tools` shows a plugin as `x` when the config lists `rousseau-plugin-x`: the same short name
    // the config itself accepts for it.
    const name = [given, `rousseau-plugin-${given}`].find((m) => project.modules.includes(m));
    if (!project.file || name === undefined) {
      const where = project.file ? `the plugins of ${project.file}` : `a config (none was found from ${project.cwd})`;
      throw new UsageError(
        `"${given}" is not in ${where}${project.modules.length ? `; it lists ${project.modules.map((m) => `"${m}"`).join(', ')}` : ''}`,
      );
    }
    const file = project.file;
    const before = readFileSync(file, 'utf8');
    const manifest = readManifest(join(project.dir, 'package.json'));
    const dependency = [manifest.dependencies, manifest.devDependencies].some(
      (deps) => deps && typeof deps === 'object' && Object.hasOwn(deps, name),
    );
    const report = { name, config: file, uninstalled: dependency && !dryRun, dryRun };
    const edit = removeEntry(file, before, name);
    if ('reason' in edit)
      return cannotEdit(values, report, file, edit.reason, `remove the entry of "${name}" from its plugins`);
    if (!dryRun) {
      const problem = await writeChecked(file, before, edit.text, false, (modules) => !modules.includes(name));
      if (problem) return cannotEdit(values, report, file, problem, `remove the entry of "${name}" from its plugins`);
      if (dependency) await npm(['uninstall', '--save', '--no-audit', '--no-fund', name], project.dir);
    }
    if (values.json) printJson(report);
    else
      print(
        [
          `${dryRun ? 'Would remove' : 'Removed'} "${name}" from the plugins of ${file}`,
          ...(dependency ? [`${dryRun ? 'Would run' : 'Ran'}: npm uninstall ${name}  (in ${project.dir})`] : []),
        ].join('\n'),
      );
    return EXIT.ok;
  },
};

/**
 * Whether a local SPEC (at `local`) is added to the config by its path instead of installed, and why:
 * a plugin module on its own has no package to install; and npm installs a folder under the
 * project's root as it would a workspace, devDependencies and all (a scaffolded plugin's mocha, tsx,
 * typescript: dozens of packages), where the folder's own node_modules already serves the plugin.
 */
function addedByPath(npmSpec: string, local: string, dir: string): { file: boolean; why: string } | undefined {
  if (!isPathSpec(npmSpec)) return undefined;
  const stat = statSync(local);
  if (stat.isFile()) return TARBALL.test(local) ? undefined : { file: true, why: 'a plugin file, not a package' };
  return npmSpec.startsWith('./') && local !== dir
    ? { file: false, why: `a folder inside ${dir} (its own node_modules serves it)` }
    : undefined;
}

/** The config entry that names, by a path, the same plugin files as the folder `npmSpec`, if one does. */
async function listedByPath(npmSpec: string, project: Project): Promise<string | undefined> {
  if (!isPathSpec(npmSpec)) return undefined;
  const { resolvePlugin } = await import('../loader.ts');
  const fileOf = (specifier: string) => {
    try {
      return realpathSync(resolvePlugin(specifier, project.dir));
    } catch {
      return undefined; // not loadable as it stands: the load after the edit says why
    }
  };
  const own = fileOf(npmSpec);
  return own === undefined ? undefined : project.modules.find((module) => isPathSpec(module) && fileOf(module) === own);
}

interface Project {
  /** Where the command runs (`--cwd`): relative specs are read from here. */
  cwd: string;
  /** The project's directory: the config's, or `cwd` when there is none. npm runs here. */
  dir: string;
  file?: string;
  /** The modules the config lists. */
  modules: string[];
}

async function projectOf(values: Values): Promise<Project> {
  const { loadConfig } = await import('../config.ts');
  const cwd = resolve(typeof values.cwd === 'string' ? values.cwd : process.cwd());
  const loaded = await loadConfig({ cwd, ...(typeof values.config === 'string' ? { configFile: values.config } : {}) });
  const modules = (loaded.config.plugins ?? []).map(entryModule).filter((m): m is string => m !== undefined);
  return { cwd, dir: loaded.dir, ...(loaded.file ? { file: loaded.file } : {}), modules };
}

/**
 * SPEC and NAME reach npm's command line, after `--` too: one that starts with `-` would be read by
 * npm as an option (`--registry=…`, `--script-shell=…`), not as the package it stands for.
 */
function notAnOption(what: string, value: string): void {
  if (value.startsWith('-'))
    throw new UsageError(`${what} "${value}" starts with "-": npm would take it for an option, not a package`);
}

/** A path-like spec, read from `cwd`, as npm should see it from `dir`: relative, so package.json stays portable. */
function npmSpecifier(spec: string, cwd: string, dir: string): string {
  const path = spec.replace(/^file:/, '');
  const pathLike = /^(?:\.{1,2}(?:\/|$)|\/|file:)/.test(spec) || TARBALL.test(spec);
  if (!pathLike) return spec;
  const target = isAbsolute(path) ? path : resolve(cwd, path);
  if (!existsSync(target)) throw new UsageError(`${spec}: no file or folder at ${target}`);
  return modulePath(dir, target);
}

/** Whether a spec (as `npmSpecifier` writes it) or a config's module names a file or folder, not a package name or a git URL. */
function isPathSpec(spec: string): boolean {
  return spec.startsWith('.') || isAbsolute(spec);
}

/** `target` as a path relative to `dir`, written the way a config and npm read one: `./x`, `../x`, or absolute. */
function modulePath(dir: string, target: string): string {
  const rel = relative(dir, target);
  return rel.startsWith('..') || isAbsolute(rel) ? rel : `./${rel}`;
}

/** The name and version SPEC installs: a folder's package.json says; else as npm reads it (no install: a dry-run pack). */
async function packageOf(spec: string, dir: string): Promise<{ name: string; version?: string }> {
  // A folder names itself in its package.json: npm pack would cost ~0.8 s of CPU to read it out.
  const manifest = isPathSpec(spec) ? readManifest(join(resolve(dir, spec), 'package.json')) : {};
  if (typeof manifest.name === 'string')
    return { name: manifest.name, ...(typeof manifest.version === 'string' ? { version: manifest.version } : {}) };
  const out = await npm(['pack', '--dry-run', '--json', '--ignore-scripts', spec], dir, true);
  try {
    const [first] = JSON.parse(out) as { name?: unknown; version?: unknown }[];
    if (typeof first?.name === 'string')
      return { name: first.name, ...(typeof first.version === 'string' ? { version: first.version } : {}) };
  } catch {
    // not JSON: the error below says what npm printed
  }
  throw hostError('RH_ERR_PLUGIN_NOT_FOUND', [spec, dir, `npm pack --dry-run named no package: ${out.slice(0, 500)}`]);
}

/** Runs npm in `dir`. Its progress goes to stderr; `capture` returns its stdout instead. */
function npm(args: string[], dir: string, capture = false): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(NPM, args, { cwd: dir, stdio: ['ignore', capture ? 'pipe' : 2, capture ? 'pipe' : 2] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (error) =>
      reject(hostError('RH_ERR_PLUGIN_NOT_FOUND', [args.at(-1)!, dir, `cannot run npm: ${error.message}`])),
    );
    child.on('close', (code) => {
      if (code === 0) resolvePromise(stdout);
      else {
        const detail = (stderr || stdout).trim().split('\n').slice(-8).join('\n');
        reject(
          hostError('RH_ERR_PLUGIN_NOT_FOUND', [
            args.at(-1)!,
            dir,
            `npm ${args[0]} failed (exit ${code})${detail ? `:\n${detail}` : ''}`,
          ]),
        );
      }
    });
  });
}

function readManifest(file: string): Record<string, unknown> {
  try {
    return readJsonFile(file) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** A plugin package says so: where its plugin is, or the keyword. */
function isPluginPackage(manifest: Record<string, unknown>): boolean {
  return (
    declaresPlugin(manifest) || (Array.isArray(manifest.keywords) && manifest.keywords.includes('rousseau-plugin'))
  );
}

/**
 * The config entry that runs `name` as an MCP server, when its package is one: a command (`bin`)
 * and the MCP SDK or an `mcp` keyword, and no claim to be a plugin. Listed as a plugin it would
 * fail to load ("leads to no module"), and `add` would send its user to fix a package that is fine.
 * `folder` is where the package is: installed in node_modules, or a folder listed by its path.
 */
function mcpServerEntry(
  name: string,
  manifest: Record<string, unknown>,
  folder: string,
  installed: boolean,
  configDir: string,
): McpEntry | undefined {
  const { bin, dependencies, keywords } = manifest;
  const commands: [string, unknown][] =
    typeof bin === 'string'
      ? [[name.replace(/^@[^/]+\//, ''), bin]]
      : bin && typeof bin === 'object'
        ? Object.entries(bin)
        : [];
  const sdk =
    dependencies && typeof dependencies === 'object' && Object.hasOwn(dependencies, '@modelcontextprotocol/sdk');
  const tagged =
    Array.isArray(keywords) && keywords.some((k) => k === 'mcp' || k === 'mcp-server' || k === 'modelcontextprotocol');
  const [command, file] = commands.find(([c]) => /mcp|server/.test(c)) ?? commands[0] ?? [];
  if (command === undefined || typeof file !== 'string' || !(sdk || tagged)) return undefined;
  // `@modelcontextprotocol/server-everything` → `everything`: its tools become `everything_echo`, …
  const [scope, base = ''] = name.startsWith('@') ? name.slice(1).split('/') : ['', name];
  const short = base.replace(/^(?:mcp-)?server-|-mcp(?:-server)?$|^mcp-/g, '');
  const plugin = (short && short !== 'mcp' ? short : scope || base).replace(/[^A-Za-z0-9_-]/g, '_');
  // node runs a JavaScript command by its file: npx would cost each start of the server (and each
  // restart) ~0.5 s and ~0.6 s of CPU more, and ask the registry if the package were gone.
  const path = modulePath(configDir, join(folder, file));
  const mcp = isNodeScript(join(folder, file))
    ? { command: 'node', args: [path] }
    : { command: installed ? 'npx' : path, args: installed ? [command] : [] };
  return { name: plugin, mcp };
}

/** A command npm would run with node: a JavaScript file, or one whose `#!` line names node. */
function isNodeScript(file: string): boolean {
  if (/\.[cm]?js$/.test(file)) return true;
  try {
    return /^#!.*\bnode\b/.test(readFileSync(file, 'utf8').slice(0, 200));
  } catch {
    return false;
  }
}

/** `add` of an MCP server's package: the entry that runs it is shown, not added. */
function notAPlugin(
  values: Values,
  report: { name: string; config: string; installed: boolean; [key: string]: unknown },
  server: McpEntry,
): number {
  const { name, config, installed } = report;
  const message = `${name} is an MCP server, not a rousseau plugin: nothing was added to ${config}. The host runs an MCP server from an \`mcp\` entry (docs/mcp.md, "Using MCP servers as plugins"); add this one to its plugins, with any arguments the server needs after the command:\n  ${entrySource(server, config)}${installed ? `\nThe package stays installed, for the entry to run (npm uninstall ${name} takes it out).` : ''}`;
  printError(`rousseau-host: RH_ERR_PLUGIN_NOT_FOUND: ${message}`);
  if (values.json) printJson({ ...report, mcpEntry: server, error: { code: 'RH_ERR_PLUGIN_NOT_FOUND', message } });
  return EXIT.failure;
}

/**
 * Writes the edited config, then loads it as the host would: when it no longer loads, or does not
 * say what was meant, the old text is put back (or the new file removed) and the problem returned.
 */
async function writeChecked(
  file: string,
  before: string,
  after: string,
  created: boolean,
  meant: (modules: string[]) => boolean,
): Promise<string | undefined> {
  writeFileSync(file, after, created ? { flag: 'wx' } : {});
  const { loadConfig } = await import('../config.ts');
  let problem: string | undefined;
  try {
    const loaded = await loadConfig({ cwd: resolve(file, '..'), configFile: file });
    const modules = (loaded.config.plugins ?? []).map(entryModule).filter((m): m is string => m !== undefined);
    if (!meant(modules)) problem = 'the edited file did not say what was meant';
  } catch (error) {
    problem = `the edited file did not load: ${messageOf(error)}`;
  }
  if (problem) {
    if (created) rmSync(file, { force: true });
    else writeFileSync(file, before);
  }
  return problem;
}

function cannotEdit(values: Values, report: object, file: string, reason: string, todo: string, line?: string): number {
  const message = `cannot edit ${file} safely (${reason}); ${todo}${line ? `:\n  ${line}` : ''}`;
  printError(`rousseau-host: ${message}`);
  if (values.json) printJson({ ...report, error: { code: 'RH_ERR_CONFIG_INVALID', message } });
  else if (line) print(line);
  return EXIT.failure;
}
