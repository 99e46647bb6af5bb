import { expect } from 'chai';
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createHost, type Host } from '../../core/index.ts';
import { capturingLogger, FIXTURES, quietHost, tempDir, tempDirPerTest, until } from '../helpers.ts';
import { running } from '../plugins/shell/procs.ts';

for (const isolation of ['worker', 'process'] as const) {
  describe(`messages a hostile ${isolation} posts itself`, function () {
    this.timeout(60_000);
    let host: Host;
    let temp: ReturnType<typeof tempDir>;
    const { logger, lines } = capturingLogger('debug');

    before(async () => {
      temp = tempDir('rh-messages-');
      host = await createHost({
        cwd: temp.dir,
        audit: false,
        logger,
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

    for (const [kind, logged] of [
      ['level', { level: 'info', message: 'odd level' }],
      ['meta', { level: 'error', message: 'big meta' }],
    ] as const) {
      it(`survives a log message with a hostile ${kind}, with the host thread free`, async () => {
        // It answers at all: a host that wrote out the meta (2^40 values as JSON) never would.
        const result = await host.call('noise', { kind });
        expect(result.isError, result.content).to.equal(false);
        expect((await host.call('noise', { kind: 'plain' })).isError).to.equal(false);
        expect(lines).to.deep.include(logged);
      });
    }

    it('refuses to send a result nested deeper than the host can read, and keeps serving', async () => {
      // 3,000 levels: the host's deserializer dropped it unread (a worker: the call timed out) or
      // threw outside any handler (a process: the host died).
      const result = await host.call('noise', { kind: 'deep' });
      expect(result.code, result.content).to.equal('tool_error');
      expect(result.content).to.match(/cannot be sent to the host: it nests deeper than 1,000 levels/);
      expect((await host.call('noise', { kind: 'plain' })).isError).to.equal(false);
    });

    if (isolation === 'worker')
      it('ends the worker, naming why, when its code posts a message too deep for the host to read', async () => {
        // Node drops such a message unread: had it been a result, the call would have waited its whole timeout.
        const result = await host.call('noise', { kind: 'deep-posted' });
        expect(result.code, result.content).to.equal('crashed');
        expect(result.content).to.match(/the worker sent a message the host could not read \(Maximum call stack/);
        expect((await host.call('noise', { kind: 'plain' })).isError).to.equal(false);
      });

    it("cuts a flood of log lines posted past the relay to the relay's rate, and says how many it dropped", async () => {
      const started = Date.now();
      const result = await host.call('noise', { kind: 'flood' });
      expect(result.isError, result.content).to.equal(false);
      // 20,000 posted at once: at most twice the relay's 500 get through in each second (or part of
      // one) the host took to read them, however loaded the machine.
      const windows = Math.ceil((Date.now() - started) / 1000) + 1;
      const flood = lines.filter((l) => l.message === 'flood').length;
      expect(flood).to.be.within(1, 1_000 * windows);
      expect(flood).to.be.below(20_000);
      // The count of the dropped is told as their window ends.
      await until(() =>
        lines.some((l) => l.level === 'warn' && /dropped \d+ log lines and progress reports/.test(l.message)),
      );
    });

    it("refuses to send a value whose copy would be far larger than the plugin's heap (one string in 200 places)", async () => {
      const result = await host.call('noise', { kind: 'copies' });
      expect(result.code).to.equal('tool_error');
      expect(result.content).to.match(
        /cannot be sent to the host: it holds over 134,217,728 characters of text once copied, more than the plugin's heap \(memoryMb\) holds: a string held in many places is copied to the host once for each/,
      );
      const logged = await host.call('noise', { kind: 'copies-log' });
      expect(logged.isError, logged.content).to.equal(false);
      expect(lines).to.deep.include({ level: 'info', message: 'copies' }); // the line, without its meta
    });

    it('survives every message that names a call naming it by a BigInt or another non-id, and keeps serving', async () => {
      const result = await host.call('noise', { kind: 'ids' });
      expect(result.isError, result.content).to.equal(false);
      expect(result.content).to.equal('ok'); // not the forged result
      // The isolate dies with those reports behind it: the host sorts its calls (the ids it reported
      // as started go into arithmetic there) and goes on.
      const died = await host.call('noise', { kind: 'ids-then-exit' });
      expect(died.isError).to.equal(true);
      expect(died.code).to.equal('crashed');
      expect((await host.call('noise', { kind: 'plain' })).isError).to.equal(false);
    });
  });
}

describe('child processes a hostile plugin reports as its own', function () {
  this.timeout(60_000);
  const temp = tempDirPerTest('rh-children-');

  for (const isolation of ['worker', 'process'] as const) {
    it(`a ${isolation} cannot have the host kill a process it did not start, when it ends`, async () => {
      // Processes of the user's that are not the plugin's: one leading a group of its own, one in a
      // group it does not lead (the test's sh, then orphaned), and a child of the host in the host's
      // group (as an MCP server the host started is).
      const orphans = execFileSync(
        'sh',
        ['-c', 'setsid sleep 300 >/dev/null 2>&1 & echo $!; sleep 301 >/dev/null 2>&1 & echo $!'],
        { encoding: 'utf8' },
      )
        .trim()
        .split('\n')
        .map(Number);
      const hostChild = spawn('sleep', ['302'], { stdio: 'ignore' });
      const victims = [...orphans, hostChild.pid!];
      try {
        const host = await quietHost(temp.dir, {
          plugins: [{ module: join(FIXTURES, 'plugins', 'hostile-messages.ts'), isolation }],
        });
        const result = await host.call('noise', { kind: 'children', pids: victims });
        expect(result.isError, result.content).to.equal(false);
        await host.close(); // kills every group the isolate reported
        expect(victims.filter((pid) => !running(pid))).to.deep.equal([]);
      } finally {
        for (const pid of victims) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // killed by the host: what the test is about
          }
        }
      }
    });
  }
});
