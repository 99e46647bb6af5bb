// `npm run pack [-- --out DIR]`: the two tarballs someone outside this repo needs before anything is
// published, in DIR (default packed/): rousseau-host, and create-rousseau-tool carrying the template
// and the host tarball's path, so a plugin it scaffolds installs that host (its README says how).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
const scaffolder = join(root, 'scripts', 'create-rousseau-tool');
const { values } = parseArgs({ options: { out: { type: 'string' } } });
const out = resolve(values.out ?? join(root, 'packed'));
mkdirSync(out, { recursive: true });

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** `npm pack` in `dir` into `out`; npm's chatter goes to stderr, the tarball's path comes back. */
function pack(dir, ...flags) {
  const json = execFileSync(npm, ['pack', '--json', '--pack-destination', out, ...flags], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return join(out, JSON.parse(json)[0].filename);
}

/**
 * Packs the tarball again without the repo's `scripts` and `workspaces`. An installed host needs
 * neither, and npm (11) warns at every install of a package with a `prepare` script that it is
 * an install script waiting for approval, though npm never runs it for a tarball or the registry.
 */
function withoutRepoFields(tarball) {
  const dir = mkdtempSync(join(tmpdir(), 'rh-pack-'));
  try {
    execFileSync('tar', ['-xzf', tarball, '-C', dir]);
    const file = join(dir, 'package', 'package.json');
    const { scripts, workspaces, ...pkg } = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, `${JSON.stringify(pkg, null, 2)}\n`);
    rmSync(tarball);
    return pack(join(dir, 'package'), '--ignore-scripts');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// The host's `prepare` would rebuild dist/ unconditionally, swapping it under whatever runs from it
// (a test suite, a CLI): build only when a source changed, then pack without the lifecycle scripts.
execFileSync(process.execPath, [join(root, 'scripts', 'build.js'), '--if-stale'], { stdio: ['ignore', 2, 'inherit'] });
const host = withoutRepoFields(pack(root, '--ignore-scripts'));
const hostFile = join(scaffolder, 'host.json');
writeFileSync(hostFile, `${JSON.stringify({ tarball: host })}\n`);
let create;
try {
  create = pack(scaffolder);
} finally {
  rmSync(hostFile, { force: true }); // the repo's scaffolder uses the repo, not a tarball
}
process.stdout.write(`${host}\n${create}\n`);
process.stderr.write(
  `\nTry it outside this repo:\n  npx --package=${create} create-rousseau-tool my-tool\n  cd my-tool && npm install && npm test\n`,
);
