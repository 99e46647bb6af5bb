// Root hooks: the CLI tests run the real `rousseau-host` bin, which runs from dist/; build it from
// the current source once per run, so no test ever exercises a stale bundle.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export function mochaGlobalSetup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/build.js', import.meta.url)), '--if-stale'], {
    stdio: 'inherit',
  });
}
