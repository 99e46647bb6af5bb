import { expect } from 'chai';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { LineBuffer } from '../../core/runners/line-buffer.ts';

// The SDK's stdio buffer joined each chunk to all it held and searched it from the start for a line
// end: a 10 MiB message read in 64 KiB chunks held the host's thread for up to 5 s (a server's big
// answer, or one line a hostile server sends again and again).
describe('MCP over stdio: the read buffer', () => {
  const message = (chars: number) =>
    `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x'.repeat(chars) } })}\n`;
  /** A LineBuffer over the SDK's own buffer, and what it handed that buffer. */
  function buffers() {
    const inner = new ReadBuffer();
    const given: string[] = [];
    const spy = {
      append: (chunk: Buffer) => {
        given.push(chunk.toString());
        inner.append(chunk);
      },
      readMessage: () => inner.readMessage(),
      clear: () => inner.clear(),
    };
    return { buffer: new LineBuffer(spy, 10 * 1024 * 1024), given };
  }

  it("hands the SDK's buffer whole lines once, however many chunks a line came in", () => {
    const { buffer, given } = buffers();
    const line = message(1_000_000);
    const bytes = Buffer.from(`${line}${message(10)}${line.slice(0, 100)}`);
    for (let i = 0; i < bytes.length; i += 65_536) buffer.append(bytes.subarray(i, i + 65_536));
    expect(given.join('')).to.equal(`${line}${message(10)}`);
    for (const piece of given) expect(piece.endsWith('\n')).to.equal(true);
    expect(buffer.readMessage()).to.include({ method: 'notifications/message' });
    expect(buffer.readMessage()).to.include({ method: 'notifications/message' });
    expect(buffer.readMessage()).to.equal(null);
  });

  // The SDK's buffer copies all it holds at each append: a line at a time, a chunk of many short
  // lines (a flood of notifications) was quadratic in them.
  it("hands the SDK's buffer a chunk's lines in one piece", () => {
    const { buffer, given } = buffers();
    buffer.append(Buffer.from(`${message(1)}${message(2)}${message(3)}${message(4).slice(0, 10)}`));
    expect(given).to.deep.equal([`${message(1)}${message(2)}${message(3)}`]);
    for (let i = 0; i < 3; i++) expect(buffer.readMessage()).to.include({ method: 'notifications/message' });
    expect(buffer.readMessage()).to.equal(null);
  });

  it("finds the SDK transport's buffer where the host puts LineBuffer in front of it (an SDK that moved it would read through its own, slowly)", () => {
    const transport = new StdioClientTransport({ command: 'true' }) as unknown as { _readBuffer?: unknown };
    expect(transport._readBuffer).to.be.instanceOf(ReadBuffer);
  });

  it('refuses a line past the bound as the SDK does, and reads on after clear()', () => {
    const { buffer } = buffers();
    const long = Buffer.from('y'.repeat(1024 * 1024));
    expect(() => {
      for (let i = 0; i < 11; i++) buffer.append(long);
    }).to.throw('ReadBuffer exceeded maximum size of 10485760 bytes');
    buffer.clear();
    buffer.append(Buffer.from(message(5)));
    expect(buffer.readMessage()).to.include({ method: 'notifications/message' });
  });
});
