// Call timeouts with one timer per duration: each deadline still fires on time, in order, once, and
// never after it was cancelled; a pending one keeps the process alive and a cancelled one does not.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { deadline } from '../core/deadlines.ts';
import { nodeWithSource, ROOT } from './helpers.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('deadlines', () => {
  it('expires each deadline no earlier than its duration, in the order they started', async () => {
    const started = performance.now();
    const expired: [string, number][] = [];
    const at = (name: string) => () => expired.push([name, performance.now() - started]);
    deadline(150, at('first'));
    await sleep(40);
    deadline(150, at('second')); // the timer is armed for the first one: it must re-arm for this one
    deadline(50, at('short')); // another duration, its own queue
    await sleep(400);
    expect(expired.map(([name]) => name)).to.deep.equal(['short', 'first', 'second']);
    const when = Object.fromEntries(expired);
    expect(when.short).to.be.at.least(89); // 40 ms in, then 50 ms (timers may round down by 1 ms)
    expect(when.first).to.be.at.least(149);
    expect(when.second).to.be.at.least(189);
  });

  it('never runs a cancelled deadline, and still runs the ones around it', async () => {
    const expired: string[] = [];
    deadline(60, () => expired.push('a'));
    const b = deadline(60, () => expired.push('b'));
    deadline(60, () => expired.push('c'));
    b.cancel();
    b.cancel(); // twice is fine
    await sleep(200);
    expect(expired).to.deep.equal(['a', 'c']);
  });

  it('a deadline set while others expire is kept for its own time', async () => {
    const expired: string[] = [];
    deadline(50, () => {
      expired.push('outer');
      deadline(50, () => expired.push('inner'));
    });
    await sleep(75);
    expect(expired).to.deep.equal(['outer']);
    await sleep(150);
    expect(expired).to.deep.equal(['outer', 'inner']);
  });

  it('a deadline whose callback throws does not stall the ones after it, and the error still surfaces', async () => {
    const seen: string[] = [];
    const thrown: unknown[] = [];
    const listeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException'); // mocha's would fail the test for the error we mean to throw
    process.on('uncaughtException', (error) => thrown.push(error));
    try {
      deadline(30, () => {
        throw new Error('expire threw');
      });
      await sleep(10);
      deadline(30, () => seen.push('after'));
      await sleep(150);
    } finally {
      process.removeAllListeners('uncaughtException');
      for (const listener of listeners) process.on('uncaughtException', listener);
    }
    expect(seen).to.deep.equal(['after']);
    expect(thrown.map((e) => (e as Error).message)).to.deep.equal(['expire threw']);
  });

  it('refuses a duration a timer cannot hold', () => {
    for (const ms of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31])
      expect(() => deadline(ms, () => {}), String(ms)).to.throw(RangeError, /1 to 2147483647 ms/);
  });

  it('keeps the process alive while a deadline is pending, and not once every one is cancelled', async () => {
    // Killed (and the test failed) if it outlives 15 s: a cancelled 20 s deadline that kept it alive would.
    const run = (code: string) =>
      new Promise<string>((resolve, reject) => {
        execFile(
          process.execPath,
          nodeWithSource('core/deadlines.ts', `const { deadline } = $;\n${code}`),
          { cwd: ROOT, timeout: 15_000 },
          (error, stdout) => (error ? reject(error) : resolve(stdout)),
        );
      });
    expect(await run(`deadline(300, () => console.log('expired'));`)).to.equal('expired\n');
    expect(
      await run(`const d = deadline(20000, () => console.log('expired')); setTimeout(() => d.cancel(), 50);`),
    ).to.equal('');
  });
});
