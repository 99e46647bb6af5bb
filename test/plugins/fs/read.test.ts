import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadPluginModule } from '../load.ts';
import { textOf, toolContext } from '../tool-context.ts';
import { makeWorkspace, type Layout } from './fixture.ts';

describe('plugins/fs read', () => {
  let readTool: typeof import('../../../plugins/fs/read.ts').readTool;
  before(async () => {
    ({ readTool } = await loadPluginModule<typeof import('../../../plugins/fs/read.ts')>('plugins/fs/read.ts'));
  });
  let ws: Layout;
  beforeEach(() => (ws = makeWorkspace()));
  afterEach(() => ws.cleanup());

  const read = async (
    input: { path: string; offset?: number; limit?: number },
    options: Record<string, unknown> = {},
  ) => textOf(await readTool.execute(input, toolContext(ws.root, options)));
  const failure = (p: unknown) =>
    Promise.resolve(p).then(
      () => expect.fail('expected a failure'),
      (e: Error & { code?: string }) => e,
    );

  it('numbers lines', async () => {
    expect(await read({ path: 'a.txt' })).to.equal('     1\talpha\n     2\tbeta\n     3\tgamma');
  });

  it('returns a window of lines and says where to continue', async () => {
    writeFileSync(join(ws.root, 'n.txt'), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n'));
    const text = await read({ path: 'n.txt', offset: 3, limit: 2 });
    expect(text).to.equal(
      '     3\tline 3\n     4\tline 4\n[… more lines follow: lines 3–4 shown; call read with offset=5 to continue]',
    );
    expect(await read({ path: 'n.txt', offset: 9 })).to.equal('     9\tline 9\n    10\tline 10');
    expect((await failure(readTool.execute({ path: 'n.txt', offset: 11 }, toolContext(ws.root)))).code).to.equal(
      'offset_past_end',
    );
  });

  it('caps the bytes returned with a marker', async () => {
    writeFileSync(join(ws.root, 'big.txt'), `${'x'.repeat(100)}\n`.repeat(5000));
    const text = await read({ path: 'big.txt' }, { readMaxBytes: 2048 });
    expect(Buffer.byteLength(text)).to.be.below(2048 + 200);
    expect(text).to.match(
      /\[… output capped at 2048 bytes: lines 1–\d+ of big\.txt \(505000 bytes\) shown; call read with offset=\d+ to continue\]$/,
    );
  });

  it('cuts very long lines', async () => {
    writeFileSync(join(ws.root, 'long.txt'), 'y'.repeat(5000));
    expect(await read({ path: 'long.txt' })).to.match(
      /^ {5}1\ty{2000}… \[line cut at 2000 characters of 5000 bytes\]$/,
    );
  });

  it('refuses binary files: a NUL byte, or bytes that are not UTF-8', async () => {
    writeFileSync(join(ws.root, 'nul.bin'), Buffer.from([0x41, 0x00, 0x42]));
    writeFileSync(join(ws.root, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    for (const path of ['nul.bin', 'latin1.txt']) {
      expect((await failure(readTool.execute({ path }, toolContext(ws.root)))).code, path).to.equal('binary_file');
    }
  });

  it('reads UTF-8 text, including a character cut at the 8 KiB sample boundary', async () => {
    writeFileSync(join(ws.root, 'utf8.txt'), `${'a'.repeat(8191)}é\nfin`);
    expect(await read({ path: 'utf8.txt' })).to.include('     2\tfin');
  });

  it('refuses a FIFO at once instead of hanging on it', async () => {
    execFileSync('mkfifo', [join(ws.root, 'pipe')]);
    // It returns at all: a blocking open of a FIFO nobody writes to never would.
    const error = await failure(readTool.execute({ path: 'pipe' }, toolContext(ws.root)));
    expect(error.code).to.equal('not_a_file');
    expect(error.message).to.include('pipe is a fifo');
  });

  it('refuses a directory, and says what to use instead', async () => {
    mkdirSync(join(ws.root, 'd'));
    const error = await failure(readTool.execute({ path: 'd' }, toolContext(ws.root)));
    expect(error.code).to.equal('not_a_file');
    expect(error.message).to.include('use ls or glob');
  });

  it('says when a file is empty or missing', async () => {
    writeFileSync(join(ws.root, 'empty'), '');
    expect(await read({ path: 'empty' })).to.equal('(empty is empty)');
    expect((await failure(readTool.execute({ path: 'nope.txt' }, toolContext(ws.root)))).code).to.equal('not_found');
  });

  it('reads a 600 MB file of one line by bytes: the line is cut with a marker, never built as a string (item 4)', async function () {
    this.timeout(60_000);
    const file = join(ws.root, 'one-line.txt');
    writeFileSync(file, 'a'.repeat(8192));
    truncateSync(file, 600 * 1024 * 1024); // sparse: no disk, no newline; readline threw RangeError out of the host
    expect(await read({ path: 'one-line.txt' })).to.equal(
      `     1\t${'a'.repeat(2000)}… [line cut at 2000 characters of ${600 * 1024 * 1024} bytes]`,
    );
  });

  it('cuts a line by characters, never inside one, and ends a line at CRLF', async () => {
    writeFileSync(join(ws.root, 'wide.txt'), `${'😀'.repeat(2500)}\r\nnext\r\n`);
    const [first, second] = (await read({ path: 'wide.txt' })).split('\n');
    expect(first).to.equal(`     1\t${'😀'.repeat(2000)}… [line cut at 2000 characters of 10000 bytes]`);
    expect(second).to.equal('     2\tnext');
  });
});
