/**
 * A Node 22 binary for what Node 20 cannot run (type stripping, the MCP conformance suite's
 * `fs.globSync`): `RH_NODE22` if set, else the npm package `node@22` installed once under
 * node_modules/.cache (from npm's cache when it has it).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export function node22(): string {
  if (process.env.RH_NODE22) return process.env.RH_NODE22;
  const prefix = join(ROOT, 'node_modules', '.cache', 'rousseau-node22');
  const bin = join(prefix, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(bin)) {
    mkdirSync(prefix, { recursive: true });
    writeFileSync(join(prefix, 'package.json'), '{ "name": "rousseau-node22", "private": true }');
    execFileSync('npm', ['install', '--prefer-offline', '--no-save', '--no-audit', '--no-fund', 'node@22'], {
      cwd: prefix,
      stdio: 'ignore',
      // `npm test` sets the machine's extra CA certificates aside for this, its one trip to a registry (.mocharc.suite.cjs).
      env: process.env.RH_EXTRA_CA_CERTS
        ? { ...process.env, NODE_EXTRA_CA_CERTS: process.env.RH_EXTRA_CA_CERTS }
        : process.env,
    });
  }
  return bin;
}
