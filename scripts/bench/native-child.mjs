// The floor of the core bench's native load: Node's own import of the same plugin files, with
// `typebox` and `rousseau-host` resolved to the host's bundled copies as the host's hook does, and
// nothing else (no host, no contract check). Needs a Node that strips types. argv: <plugins dir> <count>
import { readdirSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** CPU time this process used, all its threads, since it started (user + system). */
function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

const [dir, count] = process.argv.slice(2);
const started = performance.now();
const dist = new URL('../../dist/', import.meta.url);
const aliases = {
  typebox: new URL('vendor/typebox/index.mjs', dist).href,
  'rousseau-host': new URL('contract.js', dist).href,
};
registerHooks({
  resolve: (specifier, context, next) =>
    aliases[specifier] ? { url: aliases[specifier], shortCircuit: true } : next(specifier, context),
});
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.ts'))
  .slice(0, Number(count));
let loaded = 0;
for (const f of files) if ((await import(pathToFileURL(join(dir, f)).href)).default) loaded++;
process.stdout.write(JSON.stringify({ ms: performance.now() - started, loaded, cpuMs: cpuMs() }));
