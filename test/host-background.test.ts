// A host whose plugins load in the background (`loadInBackground`): it resolves before they are in,
// tells each registration, and a call to a tool still loading waits for it, or for its cancellation.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHost, type Host } from '../core/host.ts';
import { FIXTURES, tempDir, until } from './helpers.ts';

describe('a host loading its plugins in the background', () => {
  const tmp = tempDir('rh-background-');
  const gate = join(tmp.dir, 'gate');
  let host: Host;

  before(async () => {
    host = await createHost({
      cwd: tmp.dir,
      config: {
        builtins: false,
        plugins: [
          {
            module: join(FIXTURES, 'mcp', 'slow-load.ts'),
            isolation: 'inline',
            options: { gate, tag: 'late' },
            loadTimeoutMs: 60_000,
          },
        ],
        policy: { default: 'allow' },
      },
      audit: join(tmp.dir, 'audit.jsonl'),
      logLevel: 'error',
      loadInBackground: true,
    });
  });
  after(async () => {
    tmp.write('gate', '');
    await host.close();
    tmp.cleanup();
  });

  it('resolves with no tool in yet, and a call to the loading tool ends cancelled when its signal aborts', async () => {
    expect(host.tools()).to.deep.equal([]);
    const controller = new AbortController();
    const call = host.call('late_echo', { text: 'x' }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect(await call).to.include({ isError: true, code: 'cancelled' });
    // It never reached the policy, as a call to an unknown tool does not: its one line says how it ended.
    await host.auditWritten();
    const lines = readFileSync(join(tmp.dir, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map(({ event, tool, outcome, code }) => ({ event, tool, outcome, code }))).to.deep.equal([
      { event: 'call', tool: 'late_echo', outcome: 'error', code: 'cancelled' },
    ]);
    expect(lines[0]!.durationMs).to.be.at.least(50);
  });

  it('tells the registration, then answers the call that waited, and is ready', async () => {
    let told = 0;
    const unsubscribe = host.onToolsChanged(() => told++);
    const waiting = host.call('late_echo', { text: 'x' });
    tmp.write('gate', '');
    expect(await waiting).to.include({ isError: false, content: 'late:x' });
    await host.ready;
    await until(() => told === 1, { message: 'one tools-changed' });
    unsubscribe();
    expect(host.tools().map((t) => t.name)).to.deep.equal(['late_echo']);
    expect((await host.call('nope', {})).code).to.equal('unknown_tool');
  });
});

describe('closing a host whose plugins still load', () => {
  it('gives up the loads under way instead of waiting them out, and ends the waiting calls', async () => {
    const tmp = tempDir('rh-background-close-');
    try {
      const host = await createHost({
        cwd: tmp.dir,
        config: {
          builtins: false,
          plugins: [
            {
              module: join(FIXTURES, 'mcp', 'slow-load.ts'),
              isolation: 'inline',
              options: { gate: join(tmp.dir, 'never'), tag: 'never' },
              loadTimeoutMs: 600_000,
            },
          ],
          policy: { default: 'allow' },
        },
        audit: false,
        logLevel: 'error',
        loadInBackground: true,
      });
      const waiting = host.call('late_echo', { text: 'x' });
      // The load would wait ten minutes for its gate: the test's own timeout fails a close that waits for it.
      await host.close();
      expect(await waiting).to.include({ isError: true, code: 'cancelled' });
      await host.ready;
      expect(host.plugins().map((p) => [p.status, p.error?.code])).to.deep.equal([['failed', 'RH_ERR_HOST_CLOSED']]);
    } finally {
      tmp.cleanup();
    }
  });
});
