#!/usr/bin/env node
// The CLI runs from the bundle in dist/ (built by `npm install` / `npm run build`): plain node, no
// TypeScript loader on the start-up path.
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write('rousseau-host: dist/ is missing; run `npm run build` in the rousseau-host package.\n');
  process.exit(1);
}
// Before the bundle is imported: Node ≥ 22.1 then compiles it once per version, not at every start.
const { enableCompileCache } = await import(new URL('../dist/cli-cache.js', import.meta.url).href);
enableCompileCache();
const { run } = await import(bundle.href);
await run();
