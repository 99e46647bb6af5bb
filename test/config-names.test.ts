import { expect } from 'chai';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadConfig } from '../core/config.ts';
import { CONFIG_FILES } from '../core/config-names.ts';
import { tempDir } from './helpers.ts';

/** A config file's text that says `default: 'deny'`, in the language its name says. */
function configText(name: string): string {
  if (/\.(?:js|cjs)$/.test(name)) return "module.exports = { policy: { default: 'deny' } };\n";
  if (/\.(?:mjs|ts|mts|cts)$/.test(name)) return "export default { policy: { default: 'deny' } };\n";
  return '{ "policy": { "default": "deny" } }\n'; // JSON, which YAML reads too
}

describe('CONFIG_FILES', () => {
  // The names the file tools and the sandbox protect must be the names the search reads: a name it
  // reads and they miss would be a config a model could write.
  it('names every file the config search reads as the config, package.json aside', async function () {
    this.timeout(60_000);
    const read: string[] = [];
    for (const name of CONFIG_FILES) {
      const t = tempDir('rh-config-names-');
      try {
        mkdirSync(dirname(join(t.dir, name)), { recursive: true });
        writeFileSync(join(t.dir, name), configText(name));
        const found = await loadConfig({ cwd: t.dir });
        if (found.file === join(t.dir, name) && found.config.policy?.default === 'deny') read.push(name);
      } finally {
        t.cleanup();
      }
    }
    expect(read).to.deep.equal([...CONFIG_FILES]);
    const { getDefaultSearchPlaces } = await import('cosmiconfig');
    expect(getDefaultSearchPlaces('rousseau').filter((n) => !CONFIG_FILES.includes(n))).to.deep.equal(['package.json']);
  });
});
