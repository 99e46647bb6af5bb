import { expect } from 'chai';
import { Limiter } from '../core/limiter.ts';

describe('Limiter', () => {
  it('grants exactly max slots at once, and one more after a release', () => {
    const limiter = new Limiter(2, 0);
    expect([limiter.tryAcquire(), limiter.tryAcquire(), limiter.tryAcquire()]).to.deep.equal([true, true, false]);
    expect(limiter.stats).to.deep.equal({ active: 2, waiting: 0 });
    limiter.release();
    expect(limiter.stats).to.deep.equal({ active: 1, waiting: 0 });
    expect([limiter.tryAcquire(), limiter.tryAcquire()]).to.deep.equal([true, false]);
  });

  it('queues at most maxQueue callers: the next one is told queue_full at once', async () => {
    const limiter = new Limiter(1, 2);
    limiter.tryAcquire();
    const signal = new AbortController().signal;
    const first = limiter.wait(signal);
    const second = limiter.wait(signal);
    expect(await limiter.wait(signal)).to.equal('queue_full');
    expect(limiter.stats).to.deep.equal({ active: 1, waiting: 2 });
    limiter.release();
    expect(await first).to.equal('acquired');
    limiter.release();
    expect(await second).to.equal('acquired');
  });

  it('with maxQueue 0, a caller that finds no slot is refused, never queued', async () => {
    const limiter = new Limiter(1, 0);
    limiter.tryAcquire();
    expect(await limiter.wait(new AbortController().signal)).to.equal('queue_full');
    expect(limiter.stats.waiting).to.equal(0);
  });

  it('hands a released slot to the waiters in arrival order, keeping the active count at max', async () => {
    const limiter = new Limiter(1, 3);
    limiter.tryAcquire();
    const signal = new AbortController().signal;
    const order: string[] = [];
    const waits = ['a', 'b', 'c'].map((name) => limiter.wait(signal).then((r) => order.push(`${name}:${r}`)));
    for (let i = 0; i < 3; i++) {
      limiter.release();
      expect(limiter.stats.active).to.equal(1);
    }
    await Promise.all(waits);
    expect(order).to.deep.equal(['a:acquired', 'b:acquired', 'c:acquired']);
    limiter.release();
    expect(limiter.stats).to.deep.equal({ active: 0, waiting: 0 });
  });

  it('a waiter whose signal aborts leaves the queue: its place is free and the slot skips it', async () => {
    const limiter = new Limiter(1, 1);
    limiter.tryAcquire();
    const gone = new AbortController();
    const leaving = limiter.wait(gone.signal);
    gone.abort();
    expect(await leaving).to.equal('aborted');
    expect(limiter.stats.waiting).to.equal(0);

    const staying = limiter.wait(new AbortController().signal); // would be queue_full had the aborted one stayed
    limiter.release();
    expect(await staying).to.equal('acquired');
    expect(limiter.stats).to.deep.equal({ active: 1, waiting: 0 });
  });

  it('a signal aborted before the wait is refused without queueing', async () => {
    const limiter = new Limiter(1, 1);
    limiter.tryAcquire();
    expect(await limiter.wait(AbortSignal.abort())).to.equal('aborted');
    expect(limiter.stats.waiting).to.equal(0);
  });

  it('an abort after the slot was granted changes nothing: the caller holds the slot', async () => {
    const limiter = new Limiter(1, 1);
    limiter.tryAcquire();
    const controller = new AbortController();
    const waiting = limiter.wait(controller.signal);
    limiter.release();
    controller.abort();
    expect(await waiting).to.equal('acquired');
    expect(limiter.stats).to.deep.equal({ active: 1, waiting: 0 });
  });
});
