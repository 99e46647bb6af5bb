import { createJiti } from 'jiti';
const j = createJiti(import.meta.url, { interopDefault: true });
for (const f of ['/tmp/pf/nodefault.ts', '/tmp/pf/nodefault.ts', '/work/wt/author/test/fixtures/plugins/js-cjs.cjs','/work/wt/author/test/fixtures/plugins/js-cjs.cjs', '/work/wt/author/test/fixtures/plugins/js-esm.mjs', '/work/wt/author/test/fixtures/plugins/js-esm.mjs']) {
const m = await j.import(f) as any;
console.log(f, Object.keys(m), 'default' in m, m.__esModule, Object.prototype.toString.call(m));
}
