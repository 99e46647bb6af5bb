#!/usr/bin/env node
// create-rousseau-tool: `npm create rousseau-tool [dir] [-- --name N --description D --yes --force]`.
// Copies the plugin template into a new directory, names the package, and says what to do next.
// Plain JS with no dependencies, so it runs straight from the registry or a tarball, offline.
import { existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import { copyTemplate, HOST_REPO, packedHost, REPO_TEMPLATE, templateDir } from './template.js';

const EXIT = { ok: 0, failure: 1, usage: 2 };

const HELP = `Usage: npm create rousseau-tool [DIR] [-- FLAGS]
       npx create-rousseau-tool [DIR] [FLAGS]

Scaffold a rousseau-host plugin package in DIR: two example tools, tests that run them
directly and through the host, and a README that says how to run, test and publish it.

Flags (after "--" with npm create):
  -n, --name NAME          package name: "weather" becomes rousseau-plugin-weather;
                           rousseau-plugin-x and @scope/rousseau-plugin-x are kept (default: DIR's name)
  -d, --description TEXT   package description
  -y, --yes                ask nothing: use the flags and the defaults
  -f, --force              write into a non-empty DIR (files of the same name are overwritten)
      --host SPEC          where the plugin's tests get rousseau-host from (an npm spec: a range, a
                           tarball, a folder); by default the registry when it has the host, else
                           the tarball packed with this scaffolder, or the folder it runs from
  -h, --help               this help

On a terminal it asks for what the flags do not say; otherwise it uses the defaults.
Exit codes: 0 created, 1 refused or failed, 2 usage error.`;

/** The plugin name the host derives from a package name (see the template's src/index.ts). */
const PLUGIN_NAME = /^[a-z][a-z0-9-]{0,63}$/;
const PACKAGE_NAME_RULE =
  'the plugin name (what follows rousseau-plugin-) must be lowercase letters, digits and dashes, starting with a letter';
const DEFAULT_DESCRIPTION = 'Tools for rousseau-host.';
/** Where rousseau-host looks for its config (README.md, "Config reference"), for the "add it to your config" hint. */
const CONFIG_FILES = [
  'package.json#rousseau',
  ...['', '.json', '.yaml', '.yml', '.js', '.ts', '.mjs', '.cjs'].map((ext) => `.rousseaurc${ext}`),
  ...['', '.json', '.yaml', '.yml', '.js', '.ts', '.mjs', '.cjs'].map((ext) => `.config/rousseaurc${ext}`),
  ...['js', 'ts', 'mjs', 'cjs', 'mts', 'cts'].map((ext) => `rousseau.config.${ext}`),
];

/** Bad flags or names: exit 2. */
class UsageError extends Error {}

async function main(argv) {
  let args;
  try {
    args = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string', short: 'n' },
        description: { type: 'string', short: 'd' },
        yes: { type: 'boolean', short: 'y' },
        force: { type: 'boolean', short: 'f' },
        host: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError(error.message);
  }
  const { values, positionals } = args;
  if (values.help) {
    print(HELP);
    return EXIT.ok;
  }
  if (positionals.length > 1)
    throw new UsageError(`one directory at most, got ${positionals.length}: ${positionals.join(' ')}`);

  // `npm create rousseau-tool x --yes` (without the `--`) reaches us only as npm_config_yes.
  const yes = values.yes || process.env.npm_config_yes === 'true';
  const ask = !yes && process.stdin.isTTY ? prompter() : undefined;
  try {
    let dir = positionals[0];
    if (dir === undefined && values.name !== undefined) dir = shortName(packageName(values.name));
    if (dir === undefined) {
      if (!ask)
        throw new UsageError('say where to create the plugin: npm create rousseau-tool my-tool (or --name my-tool)');
      dir = await ask.text('Directory for the new plugin', 'my-tool');
    }
    const target = resolve(dir);

    const suggested = validPackageName(values.name ?? basename(target), { strict: values.name !== undefined || !ask });
    let pkgName = suggested;
    while (values.name === undefined && ask) {
      const answer = await ask.text('Package name', suggested ?? 'rousseau-plugin-my-tool');
      pkgName = validPackageName(answer, { strict: false });
      if (pkgName) break;
      process.stderr.write(`"${answer}" cannot be a plugin package name: ${PACKAGE_NAME_RULE}\n`);
    }

    const description =
      values.description ?? (ask ? await ask.text('Description', DEFAULT_DESCRIPTION) : DEFAULT_DESCRIPTION);

    if (existsSync(target) && !statSync(target).isDirectory())
      throw new Error(`${target} exists and is not a directory`);
    if (!isEmptyDir(target) && !values.force) {
      const overwrite =
        ask &&
        (await ask.confirm(`${target} is not empty. Write into it anyway (files of the same name are overwritten)?`));
      if (!overwrite) {
        throw new Error(
          `${target} is not empty; choose another directory, or pass --force to write into it (npm create rousseau-tool ${dir} -- --force)`,
        );
      }
    }

    const host = scaffold(target, { pkgName, description, hostSpec: values.host });
    print(nextSteps(target, pkgName, host));
    return EXIT.ok;
  } finally {
    ask?.close();
  }
}

/** "weather" → "rousseau-plugin-weather", "@acme/weather" → "@acme/rousseau-plugin-weather"; rousseau-plugin names are kept. */
function packageName(input) {
  const name = input.trim().toLowerCase();
  if (/^(@[^/]+\/)?rousseau-plugin(-|$)/.test(name)) return name;
  const [, scope = '', rest] = /^(@[^/]+\/)?(.*)$/.exec(name);
  const slug = rest.replace(/[^a-z0-9-]+/g, '-').replace(/^[-\d]+|-+$/g, '');
  return `${scope}rousseau-plugin-${slug}`;
}

/** The name the plugin will report to the host, as its src/index.ts derives it. */
function shortName(pkgName) {
  return pkgName.replace(/^@([^/]+)\/rousseau-plugin$/, '$1').replace(/^(?:@[^/]+\/)?rousseau-plugin-/, '');
}

/**
 * The package name `input` makes, if it makes a valid one whose plugin name the host accepts.
 * Strict (flags, no terminal): a usage error when it does not; otherwise undefined, to ask again.
 */
function validPackageName(input, { strict }) {
  const pkgName = packageName(input);
  const plugin = shortName(pkgName);
  const valid =
    /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/.test(pkgName) &&
    pkgName.length <= 214 &&
    PLUGIN_NAME.test(plugin);
  if (valid) return pkgName;
  if (strict)
    throw new UsageError(
      `"${input}" makes the package name "${pkgName}" and the plugin name "${plugin}": ${PACKAGE_NAME_RULE}`,
    );
  return undefined;
}

function isEmptyDir(dir) {
  return !existsSync(dir) || readdirSync(dir).every((entry) => entry === '.git');
}

/** Copies the template and names it: package.json through JSON, the README through its two placeholders. */
function scaffold(target, { pkgName, description, hostSpec }) {
  const template = templateDir();
  copyTemplate(template, target);
  // npm drops .gitignore from tarballs, so the template carries it as _gitignore.
  renameSync(join(target, '_gitignore'), join(target, '.gitignore'));

  const manifestFile = join(target, 'package.json');
  const pkg = JSON.parse(readFileSync(manifestFile, 'utf8'));
  pkg.name = pkgName;
  pkg.version = '0.1.0';
  pkg.description = description;
  delete pkg.private; // the template is private in its repo; a new plugin is meant to be published
  // In the repo the template tests against the host next to it (`file:..`); a new plugin tests
  // against a host its npm can install.
  const host = hostDependency(pkg.peerDependencies['rousseau-host'], hostSpec, template);
  pkg.devDependencies['rousseau-host'] = host.spec;
  writeFileSync(manifestFile, `${JSON.stringify(pkg, null, 2)}\n`);

  const readme = join(target, 'README.md');
  writeFileSync(
    readme,
    readFileSync(readme, 'utf8').replaceAll('{{name}}', pkgName).replaceAll('{{description}}', description),
  );
  return host;
}

/**
 * The rousseau-host the new plugin's tests install: `--host` when given; the peer range when the
 * registry has a release in it; else the host tarball `npm run pack` made beside this scaffolder,
 * or the host repo this scaffolder runs from. `why` says which, for the output.
 */
function hostDependency(range, hostSpec, template) {
  if (hostSpec) return { spec: localSpec(hostSpec), why: `${hostSpec} (from --host)` };
  if (published(range)) return { spec: range, why: `${range} from the registry` };
  const packed = packedHost();
  if (packed)
    return { spec: `file:${packed}`, why: `the tarball packed with this scaffolder, ${packed} (not on the registry)` };
  if (template === REPO_TEMPLATE)
    return { spec: `file:${HOST_REPO}`, why: `the repo this scaffolder runs from, ${HOST_REPO} (not on the registry)` };
  return {
    spec: range,
    why: `${range}, which the registry does not have or could not be reached: npm install fails until it does; pass --host with a tarball or folder of rousseau-host`,
  };
}

/**
 * Whether the registry has a rousseau-host in `range`. Unreachable, offline (ENOTCACHED) and E404
 * all mean no; npm is given a short fetch timeout and no retries, so a dead network costs seconds.
 */
function published(range) {
  const view = spawnSync(
    process.platform === 'win32' ? 'npm.cmd' : 'npm',
    ['view', `rousseau-host@${range}`, 'version', '--json', '--fetch-retries=0', '--fetch-timeout=5000'],
    { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return view.status === 0 && view.stdout.trim() !== '';
}

/** A path given to --host, made absolute (the new plugin's folder is elsewhere); other specs as given. */
function localSpec(spec) {
  const path = spec.replace(/^file:/, '');
  const pathLike = /^(?:\.{1,2}(?:\/|$)|\/|file:)/.test(spec) || /\.(?:tgz|tar\.gz)$/.test(spec);
  return pathLike ? `file:${resolve(path)}` : spec;
}

function nextSteps(target, pkgName, host) {
  const here = process.cwd();
  const cd = relative(here, target);
  const config = findConfig(here);
  const specifier = modulePath(config ? dirname(config) : here, target);
  const where = config
    ? `or add it to the plugins in ${relative(here, config) || config} yourself (paths are relative to that file):`
    : 'or add it to the plugins of your rousseau.config.ts yourself (paths are relative to that file; `npx rousseau-host init` writes one):';
  // The steps after the tests run in the agent's project, where the scaffolder ran: once the user
  // has gone into the plugin's folder, they are told the way back, and every path is from there.
  const back = cd ? ` (back here: cd ${shellQuote(relative(target, here))})` : '';
  return [
    `Created ${pkgName} in ${target}`,
    `rousseau-host for its tests: ${host.why}`,
    '',
    'Next:',
    ...(cd ? [`  cd ${shellQuote(cd)}`] : []),
    '  npm install',
    '  npm test          (runs `rousseau-host check .`, then the tests)',
    '',
    `Then, in your agent's project${back}:`,
    // `npx rousseau-host` in a project without the host asks the registry, which may not have it.
    `  npm install ${shellQuote(host.spec.startsWith('file:') ? host.spec.slice(5) : `rousseau-host@${host.spec}`)}`,
    // A folder inside the project is listed by its path (npm would install its devDependencies there too).
    `  npx rousseau-host add ${shellQuote(modulePath(here, target))}    (${cd && !cd.startsWith('..') && !isAbsolute(cd) ? 'adds it to the config by its path' : 'installs the plugin and adds it to the config'})`,
    `  npx rousseau-host call count_words '{"text":"to be or not to be"}'`,
    where,
    `  plugins: [${jsString(specifier)}],`,
  ].join('\n');
}

/** The config rousseau-host would find from `dir`: upward, up to the first folder with a package.json. */
function findConfig(dir) {
  for (let d = dir; ; d = dirname(d)) {
    for (const place of CONFIG_FILES) {
      const [file, key] = place.split('#');
      const path = join(d, file);
      if (!existsSync(path) || !statSync(path).isFile()) continue;
      if (!key) return path;
      try {
        if (JSON.parse(readFileSync(path, 'utf8'))[key] !== undefined) return path;
      } catch {
        // an unreadable package.json is not a config
      }
    }
    if (existsSync(join(d, 'package.json')) || dirname(d) === d) return undefined;
  }
}

/** How the config names the plugin: relative when it is near, absolute when it is far away. */
function modulePath(from, to) {
  const rel = relative(from, to).split(sep).join('/');
  if (rel.startsWith('../..')) return to;
  return rel.startsWith('..') ? rel : `./${rel}`;
}

function jsString(text) {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function shellQuote(text) {
  return /^[\w./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Questions on the terminal: prompts go to stderr, so stdout carries only the result. */
function prompter() {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  let closed = false;
  return {
    async text(question, fallback) {
      const answer = (await rl.question(`${question} (${fallback}): `)).trim();
      return answer || fallback;
    },
    async confirm(question) {
      return /^y(es)?$/i.test((await rl.question(`${question} (y/N): `)).trim());
    },
    close() {
      if (!closed) rl.close();
      closed = true;
    },
  };
}

function print(text) {
  process.stdout.write(`${text}\n`);
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`create-rousseau-tool: ${error.message}\n`);
  if (error instanceof UsageError) process.stderr.write('Run with --help for the flags.\n');
  process.exitCode = error instanceof UsageError ? EXIT.usage : EXIT.failure;
}
