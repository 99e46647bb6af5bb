// The stdout guard (core/mcp/stdout-guard.ts) over a real stream that pushes back: a send waits for
// stdout to drain, and no longer than stdout lives.
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { guardStdout } from '../../core/mcp/stdout-guard.ts';

describe('MCP stdout guard', () => {
  const own = Object.getOwnPropertyDescriptor(process, 'stdout')!;
  afterEach(() => Object.defineProperty(process, 'stdout', own));

  /** A stdout that takes one chunk and never finishes writing it: every write after it pushes back. */
  function stuckStdout(emitClose = true) {
    const stream = new Writable({ highWaterMark: 1, emitClose, write() {} });
    Object.defineProperty(process, 'stdout', { configurable: true, get: () => stream });
    return stream;
  }
  const state = (promise: Promise<void>) =>
    Promise.race([promise.then(() => 'settled'), new Promise((resolve) => setImmediate(resolve, 'pending'))]);

  for (const [how, end] of [
    ['closes', (s: Writable) => s.destroy()],
    ['fails', (s: Writable) => s.destroy(new Error('EPIPE'))],
  ] as const) {
    it(`settles a send waiting for stdout to drain when stdout ${how}`, async () => {
      const stream = stuckStdout(how === 'closes');
      stream.on('error', () => {});
      const guard = guardStdout();
      try {
        await guard.send('{"first":1}\n'); // resolves at once; its write pushes back on the next tick
        await new Promise((resolve) => process.nextTick(resolve));
        const waiting = guard.send('{"second":2}\n');
        expect(await state(waiting)).to.equal('pending');
        end(stream);
        expect(await state(waiting)).to.equal('settled');
        expect(await state(guard.send('{"third":3}\n'))).to.equal('settled');
      } finally {
        guard.restore();
      }
    });
  }

  it('still waits for a drain while stdout lives', async () => {
    const stream = stuckStdout();
    const guard = guardStdout();
    try {
      await guard.send('{"first":1}\n');
      await new Promise((resolve) => process.nextTick(resolve));
      const waiting = guard.send('{"second":2}\n');
      expect(await state(waiting)).to.equal('pending');
      stream.emit('drain');
      expect(await state(waiting)).to.equal('settled');
    } finally {
      guard.restore();
    }
  });
});
