import { expect } from 'chai';
import { join } from 'node:path';
import { createHost, type Host } from '../../core/index.ts';
import { FIXTURES, tempDir } from '../helpers.ts';

for (const isolation of ['worker', 'process'] as const) {
  describe(`messages a hostile ${isolation} posts itself`, function () {
    this.timeout(60_000);
    let host: Host;
    let temp: ReturnType<typeof tempDir>;

    before(async () => {
      temp = tempDir('rh-messages-');
      host = await createHost({
        cwd: temp.dir,
        audit: false,
        logLevel: 'error',
        config: {
          builtins: false,
          plugins: [{ module: join(FIXTURES, 'plugins', 'hostile-messages.ts'), isolation }],
          policy: { default: 'allow' },
        },
      });
    });
    after(async () => {
      await host.close();
      temp.cleanup();
    });

    for (const kind of ['level', 'meta']) {
      it(`survives a log message with a hostile ${kind}, with the host thread free`, async () => {
        const started = performance.now();
        const result = await host.call('noise', { kind });
        expect(result.isError, result.content).to.equal(false);
        expect(performance.now() - started).to.be.below(2000);
        expect((await host.call('noise', { kind: 'plain' })).isError).to.equal(false);
      });
    }
  });
}
