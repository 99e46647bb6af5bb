// Where the plugin template is and how it is copied: shared by the CLI (index.js) and by the
// pack step (bundle-template.js), so the tarball carries exactly what a scaffold receives.
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));

/** The rousseau-host repo, when this scaffolder runs from its clone. */
export const HOST_REPO = join(HERE, '..', '..');
/** In the rousseau-host repo: the live template, a workspace that CI tests. */
export const REPO_TEMPLATE = join(HOST_REPO, 'plugin-template');
/** Written by `npm run pack` into the packed scaffolder: where the host tarball packed with it is. */
export const PACKED_HOST = join(HERE, 'host.json');
/** In the packed package: the copy bundle-template.js made at `npm pack` time. */
export const PACKED_TEMPLATE = join(HERE, 'template');

/** What an install or a test run leaves in the template and a new plugin must not inherit. */
const LEFT_BY_USE = new Set(['node_modules', '.rousseau', 'package-lock.json', 'dist']);

/** The template to copy: the repo's own when running inside the rousseau-host repo, else the packed one. */
export function templateDir() {
  if (isHostRepo(HOST_REPO) && existsSync(join(REPO_TEMPLATE, 'package.json'))) return REPO_TEMPLATE;
  if (existsSync(join(PACKED_TEMPLATE, 'package.json'))) return PACKED_TEMPLATE;
  throw new Error(
    `the plugin template is missing (looked in ${PACKED_TEMPLATE} and ${REPO_TEMPLATE}); reinstall create-rousseau-tool`,
  );
}

/** The host tarball `npm run pack` made with this scaffolder, when it is still there. */
export function packedHost() {
  try {
    const { tarball } = JSON.parse(readFileSync(PACKED_HOST, 'utf8'));
    return typeof tarball === 'string' && existsSync(tarball) ? tarball : undefined;
  } catch {
    return undefined; // not packed by `npm run pack`, or from the registry
  }
}

/** Copies the template into `target` (files of the same name are overwritten), minus what using it leaves behind. */
export function copyTemplate(from, target) {
  cpSync(from, target, {
    recursive: true,
    filter: (source) => source === from || !LEFT_BY_USE.has(basename(source)),
  });
}

function isHostRepo(dir) {
  try {
    return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name === 'rousseau-host';
  } catch {
    return false;
  }
}
