// `CallOptions.onLog`: every `ctx.log` entry of a call reaches that call's caller, whatever the
// isolation, at every level, while the host's logger still gets each line scoped to the call.
import { expect } from 'chai';
import { join } from 'node:path';
import { createHost, type Host } from '../../core/host.ts';
import type { Logger } from '../../core/log.ts';
import type { LogEntry } from '../../core/types.ts';
import { FIXTURES, until } from '../helpers.ts';

interface Line {
  level: string;
  message: string;
  meta: Record<string, unknown>;
}

/** A logger that keeps every line it is given, with the scope of the child that logged it. */
function capturingLogger(lines: Line[], scope: Record<string, unknown> = {}): Logger {
  const log = (level: string, message: string, meta?: Record<string, unknown>) =>
    void lines.push({ level, message, meta: { ...scope, ...meta } });
  return {
    log,
    error: (message, meta) => log('error', message, meta),
    warn: (message, meta) => log('warn', message, meta),
    info: (message, meta) => log('info', message, meta),
    debug: (message, meta) => log('debug', message, meta),
    child: (meta) => capturingLogger(lines, { ...scope, ...meta }),
  };
}

const EXPECTED = (tag: string): LogEntry[] => [
  { level: 'debug', message: `${tag} debug`, data: { tag, n: 1 } },
  { level: 'info', message: `${tag} info` },
  { level: 'warn', message: `${tag} warn`, data: { tag } },
  { level: 'error', message: `${tag} error`, data: { tag, nested: { ok: true } } },
];

for (const isolation of ['inline', 'worker', 'process'] as const) {
  describe(`ctx.log per call (${isolation})`, function () {
    this.timeout(60_000);
    let host: Host;
    const lines: Line[] = [];

    before(async () => {
      host = await createHost({
        cwd: join(FIXTURES, 'plugins'),
        audit: false,
        // Below every line the tool logs but `error`: the caller still gets them all.
        logLevel: 'error',
        logger: capturingLogger(lines),
        config: {
          builtins: false,
          policy: { default: 'allow' },
          plugins: [{ module: './call-logs.ts', isolation, loadTimeoutMs: 50_000 }],
        },
      });
      expect(host.plugins()[0]?.status, host.plugins()[0]?.error?.message).to.equal('loaded');
    });
    after(() => host.close());

    it("gives each caller its own call's entries, every level, in order", async () => {
      const a: LogEntry[] = [];
      const b: LogEntry[] = [];
      const [ra, rb] = await Promise.all([
        host.call('chatty', { tag: 'a' }, { callId: 'call-a', onLog: (entry) => a.push(entry) }),
        host.call('chatty', { tag: 'b' }, { callId: 'call-b', onLog: (entry) => b.push(entry) }),
      ]);
      expect(ra, ra.content).to.include({ isError: false, content: 'a' });
      expect(rb, rb.content).to.include({ isError: false, content: 'b' });
      expect(a).to.deep.equal(EXPECTED('a'));
      expect(b).to.deep.equal(EXPECTED('b'));
      // The host's logger got the lines too, each scoped to its tool and call.
      const error = lines.find((l) => l.message === 'a error');
      expect(error?.meta).to.deep.include({ tool: 'chatty', callId: 'call-a', tag: 'a', nested: { ok: true } });
    });

    it('a call without onLog still logs, and an onLog that throws costs the call nothing', async () => {
      const before = lines.length;
      const quiet = await host.call('chatty', { tag: 'q' });
      expect(quiet, quiet.content).to.include({ isError: false, content: 'q' });
      let told = 0;
      const loud = await host.call(
        'chatty',
        { tag: 't' },
        {
          onLog: () => {
            told++;
            throw new Error('the caller broke');
          },
        },
      );
      expect(loud, loud.content).to.include({ isError: false, content: 't' });
      expect(told).to.equal(4);
      expect(lines.slice(before).some((l) => l.message === 'q error' && l.meta.tool === 'chatty')).to.equal(true);
    });

    it('tells the caller nothing more once the call is answered, though the tool goes on', async () => {
      const got: string[] = [];
      const result = await host.call(
        'after_answer',
        {},
        { onLog: (entry) => got.push(entry.message), onProgress: (p) => got.push(`progress ${p.done}`) },
      );
      expect(result, result.content).to.include({ isError: false, content: 'answered' });
      await until(() => lines.some((l) => l.message === 'after the answer'), { message: 'the late line' });
      expect(got).to.deep.equal(['before the answer', 'progress 1']);
    });

    if (isolation !== 'inline')
      it("cuts an isolate's log line to 16 Ki characters, for the caller and the host's log alike", async () => {
        const got: LogEntry[] = [];
        const result = await host.call('flood', {}, { onLog: (entry) => got.push(entry) });
        expect(result, result.content).to.include({ isError: false, content: 'done' });
        const cut = `${'x'.repeat(16 * 1024)}… [${1_000_000 - 16 * 1024} characters cut]`;
        expect(got).to.deep.equal([{ level: 'error', message: cut }]);
        expect(lines.at(-1)?.message).to.equal(cut);
      });
  });
}
