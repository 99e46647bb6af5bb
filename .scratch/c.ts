import { createJiti } from 'jiti';
import { hostAliases } from '../core/paths.ts';
const j = createJiti(import.meta.url, { alias: hostAliases(), interopDefault: true });
const m = await j.import('/work/wt/author/test/fixtures/plugins/js-cjs.cjs') as any;
console.log(Object.keys(m), 'default' in m, typeof m, m.name);
const m2 = await j.import('/work/wt/author/test/fixtures/plugins/js-cjs.cjs') as any;
console.log(Object.keys(m2), 'default' in m2, typeof m2, m2.name);
