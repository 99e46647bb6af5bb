import { addEntry, removeEntry } from '../core/cli/config-edit.ts';
import { readFileSync } from 'node:fs';
import { CONFIG_TEMPLATE as init } from '../core/cli/init.ts';
const cases = [
  init,
  "export default { builtins: false, plugins: [] };\n",
  "export default { builtins: false, plugins: ['./a'] };\n",
  "// c\nexport default defineConfig({\n  plugins: [\n    './a', // keep me\n    { module: 'b', options: { x: 1 } }\n  ],\n  /* plugins: [] */\n});\n",
  "export default { builtins: false };\n",
];
for (const t of cases) {
  const r = addEntry('rousseau.config.ts', t, { module: 'rousseau-plugin-x', isolation: 'process', options: { units: 'si' } }) as any;
  console.log('-----\n' + (r.text ?? r.reason));
  if (r.text) { const back = removeEntry('rousseau.config.ts', r.text, 'rousseau-plugin-x') as any; console.log('== removed, same as before:', back.text === t, back.reason ?? ''); if (back.text !== t) console.log(back.text); }
}
console.log((addEntry('rousseau.config.json', '{\n  "builtins": false\n}\n', 'x') as any).text);
console.log((addEntry('package.json', '{\n  "name": "p",\n  "rousseau": { "plugins": ["a"] }\n}\n', 'x') as any).text);
