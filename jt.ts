import { importPlugin } from './core/sandbox/import-plugin.ts';
const t0 = performance.now();
const m = await importPlugin(new URL('./test/fixtures/plugins/echo.ts', import.meta.url).pathname) as any;
console.log(performance.now() - t0, m.name, m.tools[0].name);
