import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { BIN, echoAuditingTo, FIXTURES, fullFifo, runCli, runCliProcess, tempDir } from '../helpers.ts';
import { fixture, projectPerTest } from './shared.ts';

describe('rousseau-host call', function () {
  this.timeout(60_000); // each test spawns the real CLI a few times
  const t = projectPerTest();
  const config = t.config;
  // The plugins run inline but in the first test: what `call` prints does not depend on where a
  // plugin runs once that test has shown it for both, and each host's worker thread cost ~0.17 s of CPU.

  it('what a plugin prints to stdout goes to stderr: --json stdout stays one JSON document (inline and worker)', async () => {
    const noisy = join(FIXTURES, 'mcp', 'noisy.ts');
    for (const isolation of ['inline', 'worker']) {
      config({
        builtins: false,
        plugins: [{ module: noisy, isolation }],
        policy: { default: 'allow' },
        log: { audit: false },
      });
      const called = await runCliProcess(['call', 'noisy_add', '{"a":1,"b":2}', '--json'], { cwd: t.dir });
      expect(called.code, called.stderr).to.equal(0);
      expect(JSON.parse(called.stdout), isolation).to.include({ tool: 'noisy_add', isError: false, content: '3' });
      if (isolation === 'inline')
        expect(called.stderr).to.contain('noisy: adding 1 and 2').and.contain('noisy: raw write');
      const listed = await runCliProcess(['tools', '--json'], { cwd: t.dir });
      expect(JSON.parse(listed.stdout).plugins[0], isolation).to.include({ name: 'noisy', status: 'loaded' });
      expect(listed.stderr).to.contain('noisy plugin: loading');
      const plain = await runCliProcess(['call', 'noisy_add', '{"a":2,"b":2}'], { cwd: t.dir });
      expect(plain.stdout, isolation).to.equal('4\ndata: {"sum":4}\n');
    }
  });

  it('call: the content on stdout, exit 0; an error result exits 1; --json has the documented shape', async () => {
    config({
      builtins: false,
      plugins: [{ module: fixture('kit.ts'), isolation: 'inline' }],
      policy: { default: 'allow' },
    });
    const ok = await runCli(['call', 'greet', '{"who":"Ada"}'], { cwd: t.dir });
    expect(ok.code).to.equal(0);
    expect(ok.stdout).to.equal('hello Ada\n');
    const json = await runCli(['call', 'greet', '{"who":5}', '--json'], { cwd: t.dir });
    expect(json.code).to.equal(1);
    const result = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(result).to.include({ tool: 'greet', isError: true, code: 'invalid_input' });
    expect(result.durationMs).to.be.a('number');
    expect(result.content).to.contain('/who');
    const stdin = await runCliProcess(['call', 'greet', '-', '--json'], {
      cwd: t.dir,
      input: '{"who":"Bo","times":2}',
    });
    expect(stdin.stdout, stdin.stderr).to.not.equal('');
    expect(JSON.parse(stdin.stdout)).to.include({ isError: false, content: 'hello Bo\nhello Bo' });
    // Without --json a failure is whole on stderr, stdout empty: a redirect captures results only.
    const bad = await runCli(['call', 'greet', '{"who":5}'], { cwd: t.dir });
    expect(bad.code).to.equal(1);
    expect(bad.stdout).to.equal('');
    expect(bad.stderr).to.match(/^error \(invalid_input\): Invalid input for tool "greet":\n- \/who: /);
    const unknown = await runCli(['call', 'nope', '{}', '--json'], { cwd: t.dir });
    expect(unknown.code).to.equal(1);
    expect(JSON.parse(unknown.stdout).code).to.equal('unknown_tool');
  });

  it('call -: stdin is read no further than limits.maxInputChars, and the call refuses it, naming the bound', async () => {
    config({
      builtins: false,
      plugins: [{ module: fixture('kit.ts'), isolation: 'inline' }],
      policy: { default: 'allow' },
      limits: { maxInputChars: 2048 },
    });
    const over = await runCliProcess(['call', 'greet', '-'], {
      cwd: t.dir,
      input: JSON.stringify({ who: 'x'.repeat(3000) }),
    });
    expect(over.code).to.equal(1);
    expect(over.stdout).to.equal('');
    expect(over.stderr).to.match(
      /^error \(invalid_input\): Input for tool "greet" is too large to check: it is [\d,]+ characters of JSON, over the host's limit of 2,048 parsed at once \(limits\.maxInputChars\)/,
    );
    const within = await runCliProcess(['call', 'greet', '-'], { cwd: t.dir, input: '{"who":"Bo"}' });
    expect(within.stdout, within.stderr).to.equal('hello Bo\n');
  });

  it('call: an unknown tool with a plugin that failed to load says so on stderr, naming the plugin', async () => {
    config({
      builtins: false,
      plugins: [{ module: fixture('kit.ts'), isolation: 'inline' }, { module: './no-such-plugin.ts' }],
      policy: { default: 'allow' },
    });
    const called = await runCli(['call', 'count_words', '{}'], { cwd: t.dir });
    expect(called.code).to.equal(1);
    expect(called.stdout).to.equal('');
    expect(called.stderr).to.match(/^error \(unknown_tool\): Unknown tool "count_words"/m);
    expect(called.stderr).to.match(/note: plugin \S+ failed; `rousseau-host tools` says why/);
    const known = await runCli(['call', 'greet', '{"who":"Ada"}'], { cwd: t.dir });
    expect(known.stderr).to.not.contain('note: plugin');
  });

  it('call: --json shows blocks and data; text mode prints the text, names the other blocks (never their base64) and shows the data; tools --json lists outputSchema', async () => {
    config({
      builtins: false,
      plugins: [{ module: fixture('rich.ts'), isolation: 'inline' }],
      policy: { default: 'allow' },
    });
    const json = await runCli(['call', 'every_block', '--json'], { cwd: t.dir });
    expect(json.code, json.stderr).to.equal(0);
    const result = JSON.parse(json.stdout) as { blocks: { type: string; data?: string }[] };
    expect(result.blocks.map((b) => b.type)).to.deep.equal(['text', 'audio', 'resource_link', 'resource', 'resource']);
    expect(result.blocks[1]?.data).to.equal(Buffer.from('RIFF....WAVE').toString('base64'));
    const text = await runCli(['call', 'every_block'], { cwd: t.dir });
    expect(text.stdout).to.equal(
      [
        'all kinds',
        '[audio audio/wav, 12 B]',
        '[resource link file:///notes.md "notes" text/markdown]',
        '[resource file:///a.txt text/plain]',
        'embedded text',
        '[resource file:///b.bin, 3 B]',
        '',
      ].join('\n'),
    );
    const picture = await runCli(['call', 'picture'], { cwd: t.dir });
    expect(picture.stdout).to.equal('a red dot\n[image image/png, 70 B]\n');
    const withText = await runCli(['call', 'weather', '{"mode":"text"}'], { cwd: t.dir });
    expect(withText.stdout).to.equal('Paris: 21.5 °C\ndata: {"city":"Paris","temperature":21.5}\n');
    const dataOnly = await runCli(['call', 'weather', '{"mode":"ok"}'], { cwd: t.dir });
    expect(dataOnly.stdout).to.equal('{"city":"Paris","temperature":21.5}\n');
    const weather = await runCli(['call', 'weather', '{"mode":"text"}', '--json'], { cwd: t.dir });
    expect(JSON.parse(weather.stdout)).to.deep.include({ data: { city: 'Paris', temperature: 21.5 } });
    const tools = JSON.parse((await runCli(['tools', '--json'], { cwd: t.dir })).stdout) as {
      plugins: { tools: { name: string; outputSchema?: { type: string } }[] }[];
    };
    const listed = tools.plugins[0]!.tools;
    expect(listed.find((tool) => tool.name === 'weather')?.outputSchema?.type).to.equal('object');
    expect(listed.find((tool) => tool.name === 'picture')).to.not.have.property('outputSchema');
  });

  it('call: prints the result only once its audit lines are in the file (an audit FIFO no one reads yet holds it)', async () => {
    const sink = tempDir('rh-call-fifo-');
    const fifo = fullFifo(sink.dir);
    config(echoAuditingTo(fifo.path));
    // A process of its own: the host waits on the FIFO with its whole thread.
    const child = spawn(process.execPath, [BIN, 'call', 'echo', '{"text":"held"}'], {
      cwd: t.dir,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await fifo.writerWaits(child.pid!);
      expect(stdout, 'printed before its audit lines were written').to.equal('');
      const lines = await fifo.lines();
      expect(await exited).to.equal(0);
      expect(stdout.trim()).to.equal('held');
      expect(lines.map((l) => (JSON.parse(l) as { event: string }).event)).to.deep.equal(['decision', 'call']);
    } finally {
      child.kill('SIGKILL');
      fifo.close();
      sink.cleanup();
    }
  });

  it('call: an ask decision is denied without a terminal, approved with --yes', async () => {
    config({
      builtins: false,
      plugins: [{ module: fixture('echo.ts'), isolation: 'inline' }],
      policy: { default: 'ask', readOnlyDefault: 'ask' },
    });
    const denied = await runCli(['call', 'echo', '{"text":"x"}', '--json'], { cwd: t.dir });
    expect(JSON.parse(denied.stdout)).to.include({ code: 'denied' });
    expect(JSON.parse(denied.stdout).content).to.contain('--yes');
    const yes = await runCli(['call', 'echo', '{"text":"x"}', '--json', '--yes'], { cwd: t.dir });
    expect(JSON.parse(yes.stdout)).to.include({ isError: false, content: 'x' });
  });
});
