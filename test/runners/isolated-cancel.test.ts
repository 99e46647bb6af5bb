// A cancelled call to an isolated plugin is answered at once, but its tool may ignore the abort:
// the call keeps its concurrency slot until the isolate says the tool stopped, so cancelling and
// calling again never runs more than the plugin's limit; a tool that outlives its timeout that way
// is a timed-out tool, and its isolate is stopped. A timed-out call whose isolate retires while
// other calls finish keeps its slot the same way.
import { expect } from 'chai';
import type { Host } from '../../core/host.ts';
import { capturingLogger, until } from '../helpers.ts';
import { fault, makeHost } from './isolated-faults.ts';

const PLUGIN = fault('ignores-cancel.ts');

async function cancelledWhileRunning(host: Host, ms: number): Promise<void> {
  const controller = new AbortController();
  const pending = host.call('stubborn', { ms }, { signal: controller.signal });
  await new Promise((resolve) => setTimeout(resolve, 300)); // it has started in the isolate
  controller.abort();
  expect((await pending).code).to.equal('cancelled');
}

for (const isolation of ['worker', 'process'] as const) {
  describe(`${isolation} runner: a cancelled tool that runs on`, function () {
    this.timeout(60_000);

    it('keeps its slot until it stops: the next call waits instead of running beside it', async () => {
      const host = await makeHost([{ module: PLUGIN, isolation, maxConcurrency: 1, loadTimeoutMs: 60_000 }]);
      try {
        await cancelledWhileRunning(host, 1_000);
        const next = await host.call('stubborn', { ms: 10 });
        expect(next, next.content).to.include({ isError: false, content: '1' });
      } finally {
        await host.close();
      }
    });
  });
}

describe('worker runner: a cancelled tool that outlives its timeout', function () {
  this.timeout(60_000);

  it('is a timed-out tool: its isolate is stopped, the slot comes back, and the next call runs on a new one', async () => {
    const { logger, lines } = capturingLogger('warn');
    const host = await makeHost(
      [{ module: PLUGIN, isolation: 'worker', maxConcurrency: 1, timeoutMs: 1_500, loadTimeoutMs: 60_000 }],
      {},
      logger,
    );
    try {
      await cancelledWhileRunning(host, 600_000);
      await until(() => lines.some((line) => /was cancelled and still ran 1500 ms later/.test(line.message)), {
        timeoutMs: 10_000,
        message: 'the overrun to be reported',
      });
      // Counted from 1 again: a new isolate; and it got the slot the stopped call held.
      const next = await host.call('patient', { ms: 10 });
      expect(next, next.content).to.include({ isError: false, content: '1' });
    } finally {
      await host.close();
    }
  });
});

for (const isolation of ['worker', 'process'] as const) {
  describe(`${isolation} runner: a timed-out tool that runs on while its isolate retires`, function () {
    this.timeout(60_000);
    const running = (host: Host) => host.load().find((l) => l.plugin === 'ignores-cancel')?.running;

    it('keeps its slot until it stops, as a cancelled one does; none is left held after', async () => {
      const host = await makeHost([
        { module: PLUGIN, isolation, maxConcurrency: 2, timeoutMs: 1_000, loadTimeoutMs: 60_000 },
      ]);
      try {
        // Another call in flight: the isolate answers a ping, so it retires instead of being killed,
        // and the timed-out tool (waiting on a timer, not blocking) runs on in it.
        const other = host.call('patient', { ms: 4_000 });
        await new Promise((resolve) => setTimeout(resolve, 300));
        const timedOut = await host.call('stubborn', { ms: 3_000 });
        expect(timedOut.code, timedOut.content).to.equal('timeout');
        expect(running(host), 'the timed-out tool still runs').to.equal(2);
        const done = await other;
        expect(done.isError, done.content).to.equal(false);
        await until(() => running(host) === 0, { timeoutMs: 10_000, message: 'every slot back' });
      } finally {
        await host.close();
      }
    });

    it('one that never returns is stopped with its isolate once the others finished', async () => {
      const host = await makeHost([
        { module: PLUGIN, isolation, maxConcurrency: 2, timeoutMs: 1_000, loadTimeoutMs: 60_000 },
      ]);
      try {
        const other = host.call('patient', { ms: 2_500 });
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect((await host.call('stubborn', { ms: 600_000 })).code).to.equal('timeout');
        expect(running(host), 'the timed-out tool still runs').to.equal(2);
        const done = await other;
        expect(done.isError, done.content).to.equal(false);
        await until(() => running(host) === 0, { timeoutMs: 10_000, message: 'the retired isolate to stop' });
        const next = await host.call('patient', { ms: 10 });
        expect(next, next.content).to.include({ isError: false, content: '1' }); // a new isolate
      } finally {
        await host.close();
      }
    });
  });
}
