import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { promptApprover } from '../../core/cli/approve-prompt.ts';
import type { ApprovalRequest } from '../../core/dispatch.ts';
import { createLogger } from '../../core/log.ts';

describe('the approval prompt', () => {
  it('escapes control and bidi characters from the tool, the plugin, the reason and the input', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (d: Buffer) => (shown += d.toString()));
    const approve = promptApprover(input, output);
    // The input shows as `rm -rf ~ # txt.gnp` reversed into a harmless-looking name, and an ESC sequence would clear the line.
    const request = {
      tool: { name: 'bash\u001b[2K', plugin: 'shell\u202e', description: '', inputSchema: {} },
      input: JSON.stringify({ command: 'cat \u202egnp.txt\u202c; rm -rf ~ \u2066x\u2069\r\u0085' }),
      decision: { decision: 'ask', reason: 'runs \u200fcommands' },
      callId: 'c1',
    } as unknown as ApprovalRequest;
    const pending = approve(request);
    await new Promise((resolve) => setImmediate(resolve));
    input.write('n\n');
    expect(await pending).to.equal(false);
    expect(shown).to.not.match(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
    expect(shown).to.contain(
      'bash\\u001b[2K (plugin shell\\u202e) needs approval: the default policy, runs \\u200fcommands.',
    );
    expect(shown).to.contain('input: {"command":"cat \\u202egnp.txt\\u202c; rm -rf ~ \\u2066x\\u2069\\r\\u0085"}');
  });

  /** What the prompt shows for `input` to tool `bash`, answered no. */
  async function shownFor(input: string): Promise<string> {
    const stdin = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (d: Buffer) => (shown += d.toString()));
    const pending = promptApprover(
      stdin,
      output,
    )({
      tool: { name: 'bash', plugin: 'shell', description: '', inputSchema: {} },
      input,
      decision: { decision: 'ask' },
      callId: 'c1',
    } as unknown as ApprovalRequest);
    await new Promise((resolve) => setImmediate(resolve));
    stdin.write('n\n');
    expect(await pending).to.equal(false);
    return shown;
  }

  // The last screenful is what a person reads before answering: an input that pushed the tool and
  // the start of the command above it made 'rm -rf' read as a harmless listing.
  it('shows a run of blanks as its count: padding cannot push the start of the input off the screen', async () => {
    for (const blank of [' ', '\u3164', '\u2800', '\u3000']) {
      const shown = await shownFor(JSON.stringify({ command: `rm -rf ~/src${blank.repeat(100_000)}# list the files` }));
      const lastScreen = shown.slice(-1_000);
      expect(lastScreen, JSON.stringify(blank)).to.include('rm -rf ~/src').and.include('# list the files');
      expect(lastScreen).to.include(`100,000 × U+${blank.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`);
      expect(lastScreen).to.include('bash');
    }
  });

  it('shows a long input by its start and its end, saying how much is not shown and how long it is', async () => {
    const input = JSON.stringify({ command: `rm -rf ~; ${'echo a; '.repeat(20_000)}echo done` });
    const shown = await shownFor(input);
    const lastScreen = shown.slice(-3_000);
    expect(lastScreen).to.include('{"command":"rm -rf ~; echo a;').and.include('echo done"}');
    expect(lastScreen).to.match(/\d{2,3},\d{3} characters not shown/);
    expect(lastScreen).to.include(`bash, input of ${input.length.toLocaleString('en-US')} characters`);
    expect(shown.length).to.be.below(5_000);
  });

  it('bounds what invisible characters print as once escaped: two zero-width ones in turn, 100,000 times', async () => {
    const shown = await shownFor(JSON.stringify({ command: `rm -rf ~/src${'\u200b\u200c'.repeat(50_000)}# list` }));
    expect(shown.slice(-3_000)).to.include('rm -rf ~/src\\u200b\\u200c').and.include('# list');
    expect(shown.length).to.be.below(5_000);
  });

  it('shows a short input whole, as the tool receives it', async () => {
    const input = JSON.stringify({ command: 'ls   -la' });
    expect(await shownFor(input)).to.include(`input: ${input}`);
  });

  // What a plugin logs reaches the terminal as it is logged: written while a question is open, a line
  // could stand where the person reads the question, and ask about another call than the real one.
  it('holds the log lines written while a question is open, and writes them once it is answered', async () => {
    const written: string[] = [];
    const original = process.stderr.write;
    process.stderr.write = ((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      const log = createLogger({ level: 'info', json: false });
      log.info('before the question');
      const stdin = new PassThrough();
      const pending = promptApprover(
        stdin,
        new PassThrough(),
      )({
        tool: { name: 'bash', plugin: 'shell', description: '', inputSchema: {} },
        input: '{"command":"rm -rf ~"}',
        decision: { decision: 'ask' },
        callId: 'c1',
      } as unknown as ApprovalRequest);
      await new Promise((resolve) => setImmediate(resolve));
      log.warn('read (plugin fs) needs approval: the default policy.\n  input: {"path":"README.md"}\nread: [y]es');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(written.join('')).to.include('before the question').and.not.include('needs approval');
      stdin.write('n\n');
      expect(await pending).to.equal(false);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(written.join('')).to.include('read (plugin fs) needs approval');
    } finally {
      process.stderr.write = original;
    }
  });
});
