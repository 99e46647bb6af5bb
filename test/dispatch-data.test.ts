import { expect } from 'chai';
import { join } from 'node:path';
import { createHost, type Host } from '../core/index.ts';
import { FIXTURES, tempDir } from './helpers.ts';

const PLUGIN = join(FIXTURES, 'plugins', 'hostile-dag.ts');

for (const isolation of ['worker', 'process'] as const) {
  describe(`a result's data with shared references (${isolation})`, function () {
    this.timeout(60_000);
    let host: Host;
    let temp: ReturnType<typeof tempDir>;

    before(async () => {
      temp = tempDir('rh-dag-');
      host = await createHost({
        cwd: temp.dir,
        audit: false,
        logLevel: 'error',
        config: { builtins: false, plugins: [{ module: PLUGIN, isolation }], policy: { default: 'allow' } },
      });
    });
    after(async () => {
      await host.close();
      temp.cleanup();
    });

    it('keeps a small DAG as its JSON copy', async () => {
      const result = await host.call('dag', { depth: 3 });
      expect(result.isError, result.content).to.equal(false);
      expect(result.data).to.deep.equal([
        [
          [0, 0],
          [0, 0],
        ],
        [
          [0, 0],
          [0, 0],
        ],
      ]);
    });

    it('leaves out a DAG whose JSON would be over the cap without writing it out (the host thread is not frozen)', async () => {
      // 2^40 leaves from a message of a few hundred bytes: a host that wrote out its JSON would never answer.
      const result = await host.call('dag', { depth: 40 });
      expect(result).to.include({ isError: false, dataTruncated: true });
      expect(result).to.not.have.property('data');
      expect(result.content).to.match(/\[data left out: its JSON is over the plugin's output cap of \d+ bytes\]$/);
    });
  });
}

for (const isolation of ['worker', 'process'] as const) {
  describe(`a plugin report with shared references (${isolation})`, function () {
    this.timeout(60_000);

    it("fails that plugin's load after a bounded walk, without freezing or killing the host", async () => {
      const temp = tempDir('rh-dag-report-');
      try {
        // The host starts at all: a walk of the report's DAG (2^40 values as JSON) would never end.
        const host = await createHost({
          cwd: temp.dir,
          audit: false,
          logLevel: 'error',
          config: {
            builtins: false,
            plugins: [{ module: join(FIXTURES, 'plugins', 'hostile-dag-report.ts'), isolation }],
            policy: { default: 'allow' },
          },
        });
        try {
          expect(host.plugins()[0]?.error?.message).to.match(/MiB as JSON/);
        } finally {
          await host.close();
        }
      } finally {
        temp.cleanup();
      }
    });
  });
}
