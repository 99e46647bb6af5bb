// The CLI tests run the real `rousseau-host` bin, which runs from dist/; build it from the current
// source once per run, so no test ever exercises a stale bundle. A global setup fixture, not a root
// hook: with --parallel, mocha runs it once in the main process before any worker starts (root
// hooks would run in every worker, building concurrently into the same dist/).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// Isolated plugins (worker threads, child processes) start from that bundle too, not from source
// through jiti: ~0.2 s less CPU per child process, and the suite starts hundreds of them.
process.env.RH_BUNDLED_WORKER = '1';

export function mochaGlobalSetup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/build.js', import.meta.url)), '--if-stale'], {
    stdio: 'inherit',
  });
}
