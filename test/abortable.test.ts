import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { abortable } from '../core/abortable.ts';
import { nodeWithSource, ROOT } from './helpers.ts';

const never = () => new Promise<never>(() => {});

describe('abortable', () => {
  it("passes on the promise's value or rejection, and leaves no listener on the signal", async () => {
    const controller = new AbortController();
    expect(await abortable(Promise.resolve(7), { signal: controller.signal })).to.equal(7);
    const own = new Error('own');
    const failing = abortable(Promise.reject(own), { signal: controller.signal, timeoutMs: 10_000 });
    expect(await failing.catch((error: unknown) => error)).to.equal(own);
    expect(getEventListeners(controller.signal, 'abort')).to.have.length(0);
  });

  it("rejects with the signal's reason when it aborts first, or at once when it already has", async () => {
    const controller = new AbortController();
    const waiting = abortable(never(), { signal: controller.signal });
    const reason = new Error('stop');
    controller.abort(reason);
    expect(await waiting.catch((error: unknown) => error)).to.equal(reason);
    expect(getEventListeners(controller.signal, 'abort')).to.have.length(0);
    expect(await abortable(Promise.resolve(1), { signal: controller.signal }).catch((e: unknown) => e)).to.equal(
      reason,
    );
  });

  it('rejects with a TimeoutError after timeoutMs, or with what onTimeout makes', async () => {
    const timedOut = (await abortable(never(), { timeoutMs: 20 }).catch((e: unknown) => e)) as DOMException;
    expect(timedOut).to.include({ name: 'TimeoutError', message: 'timed out after 20 ms' });
    const own = new Error('too slow');
    expect(await abortable(never(), { timeoutMs: 20, onTimeout: () => own }).catch((e: unknown) => e)).to.equal(own);
  });

  it('keeps the process alive until its timeout (a grace period is waited out, not cut by an exit)', () => {
    const script = nodeWithSource(
      'core/abortable.ts',
      `await $.abortable(new Promise(() => {}), { timeoutMs: 200 }).catch((e) => process.stdout.write(e.name));`,
    );
    const out = execFileSync(process.execPath, script, { cwd: ROOT, encoding: 'utf8' });
    expect(out).to.equal('TimeoutError');
  });
});
