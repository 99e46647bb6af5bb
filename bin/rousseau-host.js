#!/usr/bin/env node
// The CLI runs from the bundle in dist/ (built by `npm install` / `npm run build`): plain node, no
// TypeScript loader on the start-up path.
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write('rousseau-host: dist/ is missing; run `npm run build` in the rousseau-host package.\n');
  process.exit(1);
}
const { run } = await import(bundle.href);
await run();
