#!/usr/bin/env node
// The CLI runs from the bundle in dist/ (built by `npm install` / `npm run build`): plain node, no
// TypeScript loader on the start-up path.
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/cli.js', import.meta.url);
const compileCache = new URL('../dist/cli-cache.js', import.meta.url);
if (!existsSync(bundle) || !existsSync(compileCache)) {
  process.stderr.write('rousseau-host: dist/ is missing; run `npm run build` in the rousseau-host package.\n');
  process.exit(1);
}
// Node 22.1 and later keep V8's compiled code for what a command loads (the bundle, typebox, the
// MCP SDK…) on disk, in the user's own cache folder (core/user-cache.ts), and a later start skips
// compiling it: `tools --json` ran 500 → 414 M instructions on Node 22.23 (callgrind). Turned on
// before the bundle is imported; Node 20 has no such cache.
const { enableCompileCache } = await import(compileCache.href);
enableCompileCache();
const { run } = await import(bundle.href);
await run();
