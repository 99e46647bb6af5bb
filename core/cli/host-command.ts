/** How a hint names this host: the way the user can run it from where they are. */
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PACKAGE_ROOT } from '../paths.ts';

/**
 * How the user runs this host from `dir`, for the commands a hint tells them to run: `npx
 * rousseau-host` when it is the project's own dependency (installed in a `node_modules` of `dir`
 * or above it, where npx finds it), plain `rousseau-host` otherwise (a global install on PATH).
 */
export function hostCommand(dir: string): string {
  const self = realpathSync(PACKAGE_ROOT);
  for (let d = resolve(dir); ; d = dirname(d)) {
    const installed = join(d, 'node_modules', 'rousseau-host');
    if (existsSync(installed) && realpathSync(installed) === self) return 'npx rousseau-host';
    if (dirname(d) === d) return 'rousseau-host';
  }
}
