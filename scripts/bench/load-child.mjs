// Child of the core bench: loads a host with every plugin in a directory, prints the load time.
// Runs on the dist/ bundle, as the CLI does. argv: <plugins dir> <count>
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** CPU time this process used, all its threads, since it started (user + system). */
function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

const [dir, count] = process.argv.slice(2);
const started = performance.now();
const { createHost } = await import(new URL('../../dist/index.js', import.meta.url).href);
const plugins = readdirSync(dir)
  .filter((f) => f.endsWith('.ts'))
  .slice(0, Number(count))
  .map((f) => ({ module: join(dir, f), isolation: 'inline' }));
const host = await createHost({ cwd: dir, audit: false, logLevel: 'error', config: { builtins: false, plugins } });
const loaded = host.plugins().filter((p) => p.status === 'loaded').length;
const ms = performance.now() - started;
await host.close();
process.stdout.write(JSON.stringify({ ms, loaded, cpuMs: cpuMs() }));
process.exit(0);
