// `rousseau-host add` and `remove` refusing what npm would misread, before npm runs. The walks that
// run npm for real (install from a folder or a tarball, edit the config, load the plugin) are in
// test/e2e/add.e2e.ts (`npm run test:e2e`).
import { expect } from 'chai';
import { join } from 'node:path';
import { BIN, tempDir } from '../helpers.ts';
import { run } from '../scaffold/helpers.ts';

describe('rousseau-host add / remove', () => {
  let tmp: ReturnType<typeof tempDir>;
  let project: string;

  beforeEach(() => {
    tmp = tempDir('rh-add-');
    tmp.write('project/package.json', '{ "name": "project", "private": true }\n');
    project = join(tmp.dir, 'project');
  });
  afterEach(() => tmp.cleanup());

  it('refuses a SPEC or NAME that npm would read as an option, before npm runs', async () => {
    for (const args of [
      ['add', '--', '--version'],
      ['remove', '--', '--global'],
    ]) {
      const refused = await run(process.execPath, [BIN, ...args], {
        cwd: project,
        env: { npm_config_offline: 'true' },
      });
      expect(refused.code, refused.stderr).to.equal(2);
      expect(refused.stderr).to.include(`"${args[2]}" starts with "-": npm would take it for an option`);
    }
  });
});
