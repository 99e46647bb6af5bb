import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ANTHROPIC_TEST_KEY, startAnthropicServer } from '../fixtures/providers/anthropic-server.ts';
import { OPENAI_TEST_KEY, startOpenAIServer } from '../fixtures/providers/openai-server.ts';
import { BIN, echoAuditingTo, FIXTURES, fullFifo, ROOT, runCli, runCliProcess, tempDir, until } from '../helpers.ts';

/** No key in the environment: what a fresh clone sees. */
const NO_KEYS = { ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', OPENAI_BASE_URL: '', ANTHROPIC_BASE_URL: '' };
const TOOLS_ONLY = `export default { builtins: false, log: { audit: false } };\n`;
const TERM_PLUGIN = join(FIXTURES, 'plugins', 'term.ts');
const QUIET = { policy: { default: 'allow' }, log: { audit: false } };

describe('rousseau-host start', function () {
  this.timeout(30_000);

  it('plays the bundled demo offline with no key (npm start): real calls, the transcript, exit 0', async () => {
    const r = await runCli(['start', '--cwd', join(ROOT, 'examples', 'demo')], { env: NO_KEYS, timeoutMs: 25_000 });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^notes\.md \(5 lines\) says/);
    expect(r.stderr).to.contain('you: Summarise notes.md');
    expect(r.stderr).to.match(/✗ invalid_input read .*must have required properties path/);
    expect(r.stderr).to.match(/✓ read .*# Release notes/);
    expect(r.stderr).to.match(/✓ bash .*5 ⏎ \[exit code 0\]/);
    expect(r.stderr).to.match(/✗ tool_error bash .*timed out after 500 ms/);
    expect(r.stderr).to.match(/✗ denied bash .*the demo never deletes files/);
    expect(r.stderr).to.contain('[end_turn: 5 turn(s), 5 tool call(s)');
  });

  it('says exactly how to set a provider when there is none, and exits 1', async () => {
    const tmp = tempDir();
    try {
      tmp.write('rousseau.config.mjs', TOOLS_ONLY);
      const r = await runCli(['start', '-p', 'hi'], { cwd: tmp.dir, env: NO_KEYS });
      expect(r.code).to.equal(1);
      expect(r.stdout).to.equal('');
      for (const hint of [
        'export ANTHROPIC_API_KEY=',
        'export OPENAI_API_KEY=',
        'OPENAI_BASE_URL=http://localhost:11434/v1',
        'OPENAI_MODEL=',
        "provider: { name: 'anthropic'",
        '--provider',
        '--replay FILE plays a script',
        'node_modules/rousseau-host/docs/agent.md',
        'in a clone of rousseau-host, npm start',
      ]) {
        expect(r.stderr).to.contain(hint);
      }
    } finally {
      tmp.cleanup();
    }
  });

  it('runs one turn with -p against Anthropic (picked from the environment): the answer alone on stdout', async () => {
    const tmp = tempDir();
    const server = await startAnthropicServer([{ turn: { text: 'Paris.' } }]);
    try {
      tmp.write('rousseau.config.mjs', TOOLS_ONLY);
      const r = await runCli(['start', '-p', 'Capital of France?'], {
        cwd: tmp.dir,
        env: { ...NO_KEYS, ANTHROPIC_API_KEY: ANTHROPIC_TEST_KEY, ANTHROPIC_BASE_URL: server.url },
      });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.equal('Paris.\n');
      expect(server.violations).to.deep.equal([]);
      expect(server.requests[0]!.body.messages).to.deep.equal([
        { role: 'user', content: [{ type: 'text', text: 'Capital of France?', cache_control: { type: 'ephemeral' } }] },
      ]);
      expect(r.stderr).not.to.contain(ANTHROPIC_TEST_KEY);
    } finally {
      await server.close();
      tmp.cleanup();
    }
  });

  it('reads the prompt from piped stdin and writes the whole run with --json (OpenAI-compatible, --provider)', async () => {
    const tmp = tempDir();
    const server = await startOpenAIServer([
      { turn: { text: 'Checking.', toolCalls: [{ id: 'call_1', name: 'no_such', input: {} }] } },
      { turn: { text: 'Done.' } },
    ]);
    try {
      tmp.write('rousseau.config.mjs', TOOLS_ONLY);
      const r = await runCliProcess(['start', '--provider', 'openai', '--model', 'local-model', '--json'], {
        cwd: tmp.dir,
        input: 'piped prompt\n',
        env: {
          ...NO_KEYS,
          ANTHROPIC_API_KEY: 'must-not-be-picked',
          OPENAI_API_KEY: OPENAI_TEST_KEY,
          OPENAI_BASE_URL: `${server.url}/v1`,
        },
      });
      expect(r.code, r.stderr).to.equal(0);
      const run = JSON.parse(r.stdout);
      expect(run).to.include({
        provider: 'openai',
        model: 'local-model',
        stopReason: 'end_turn',
        text: 'Done.',
        turns: 2,
        toolCalls: 1,
      });
      expect(run.messages.map((m: { role: string }) => m.role)).to.deep.equal([
        'user',
        'assistant',
        'tool',
        'assistant',
      ]);
      expect(run.messages[2].results[0]).to.include({ callId: 'call_1', isError: true, code: 'unknown_tool' });
      expect(server.requests[0]!.body.messages.at(-1)).to.deep.equal({ role: 'user', content: 'piped prompt' });
      expect(server.violations).to.deep.equal([]);
    } finally {
      await server.close();
      tmp.cleanup();
    }
  });

  it('sends the tool results to the model only once their audit lines are in the file (an audit FIFO no one reads yet holds them)', async () => {
    const tmp = tempDir();
    const sink = tempDir('rh-agent-fifo-');
    const fifo = fullFifo(sink.dir);
    const server = await startOpenAIServer([
      { turn: { text: 'Echoing.', toolCalls: [{ id: 'call_1', name: 'echo', input: { text: 'held' } }] } },
      { turn: { text: 'Done.' } },
    ]);
    tmp.write('rousseau.config.json', JSON.stringify(echoAuditingTo(fifo.path)));
    const child = spawn(
      process.execPath,
      [BIN, 'start', '--provider', 'openai', '--model', 'local-model', '-p', 'go'],
      {
        cwd: tmp.dir,
        env: { ...process.env, ...NO_KEYS, OPENAI_API_KEY: OPENAI_TEST_KEY, OPENAI_BASE_URL: `${server.url}/v1` },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await fifo.writerWaits(child.pid!);
      expect(server.requests, 'the results went to the model before their audit lines').to.have.length(1);
      const lines = await fifo.lines();
      expect(await exited, stderr).to.equal(0);
      expect(server.requests).to.have.length(2);
      expect(lines.map((l) => (JSON.parse(l) as { event: string }).event)).to.deep.equal(['decision', 'call']);
    } finally {
      child.kill('SIGKILL');
      fifo.close();
      await server.close();
      tmp.cleanup();
      sink.cleanup();
    }
  });

  it('exits 1 with the provider error when the model API fails, and 2 on a bad --provider', async () => {
    const tmp = tempDir();
    const server = await startAnthropicServer([{ status: 400, message: 'prompt is too long' }]);
    try {
      tmp.write('rousseau.config.mjs', TOOLS_ONLY);
      const failed = await runCli(['start', '-p', 'x'], {
        cwd: tmp.dir,
        env: { ...NO_KEYS, ANTHROPIC_API_KEY: ANTHROPIC_TEST_KEY, ANTHROPIC_BASE_URL: server.url },
      });
      expect(failed.code).to.equal(1);
      expect(failed.stderr).to.match(/answered 400: prompt is too long/);
      const usage = await runCli(['start', '--provider', 'gemini', '-p', 'x'], { cwd: tmp.dir, env: NO_KEYS });
      expect(usage.code).to.equal(2);
      expect(usage.stderr).to.contain('--provider must be one of anthropic, openai, openai-responses, replay');
    } finally {
      await server.close();
      tmp.cleanup();
    }
  });

  it('escapes control and bidi characters from the model and tools in the transcript; the piped answer is left as is', async () => {
    const tmp = tempDir();
    try {
      tmp.write(
        'rousseau.config.json',
        JSON.stringify({
          builtins: false,
          plugins: [join(ROOT, 'test', 'fixtures', 'plugins', 'echo.ts')],
          policy: { default: 'allow' },
          log: { audit: false },
        }),
      );
      const nasty = 'ok\u001b[2J\u001b[1A\u202eevil\u2066\r\u0085';
      const script = tmp.write(
        'script.json',
        JSON.stringify({
          turns: [
            {
              text: `narration ${nasty}`,
              toolCalls: [
                { name: 'echo', input: { text: nasty } },
                { name: 'gone\u001b[2K', input: {} },
              ],
            },
            { text: `answer ${nasty}` },
          ],
        }),
      );
      const r = await runCli(['start', '--replay', script, '-p', 'go'], { cwd: tmp.dir, env: NO_KEYS });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.not.match(
        /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/,
      );
      expect(r.stderr).to.contain('narration ok\\u001b[2J\\u001b[1A\\u202eevil\\u2066\\u000d\\u0085');
      expect(r.stderr).to.contain('✓ echo').and.contain('ok\\u001b[2J');
      expect(r.stderr).to.contain('→ gone\\u001b[2K');
      expect(r.stdout).to.equal(`answer ${nasty}\n`);
    } finally {
      tmp.cleanup();
    }
  });

  it('prints no answer for an interrupted -p run: a note on stderr, nothing on stdout, exit 130', async () => {
    const tmp = tempDir();
    try {
      tmp.write('rousseau.config.json', JSON.stringify({ builtins: false, plugins: [TERM_PLUGIN], ...QUIET }));
      const script = tmp.write(
        'script.json',
        JSON.stringify({
          turns: [{ text: 'Half a thought', toolCalls: [{ name: 'slow', input: { ms: 5000 } }] }, { text: 'never' }],
        }),
      );
      const child = spawn(process.execPath, [BIN, 'start', '--replay', script, '-p', 'go'], {
        cwd: tmp.dir,
        env: { ...process.env, ...NO_KEYS, NO_COLOR: '1' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = new Promise((resolve) => child.on('close', resolve));
      await until(() => stderr.includes('→ slow'), { timeoutMs: 15_000, message: () => `the call; stderr: ${stderr}` });
      child.kill('SIGINT');
      expect(await code, stderr).to.equal(130);
      expect(stdout).to.equal('');
      expect(stderr).to.contain('Half a thought');
      expect(stderr).to.contain('interrupted; the run was cancelled, no answer');
    } finally {
      tmp.cleanup();
    }
  });

  it("sends a piped prompt rather than the replay script's own, and shows progress off a terminal as plain lines", async () => {
    const tmp = tempDir();
    try {
      tmp.write('rousseau.config.json', JSON.stringify({ builtins: false, plugins: [TERM_PLUGIN], ...QUIET }));
      const script = tmp.write(
        'script.json',
        JSON.stringify({
          prompt: 'the script prompt',
          turns: [{ toolCalls: [{ name: 'slow', input: { ms: 300 } }] }, { text: 'Counted.' }],
        }),
      );
      const r = await runCliProcess(['start', '--replay', script, '--json'], {
        cwd: tmp.dir,
        input: 'the piped prompt\n',
        env: NO_KEYS,
      });
      expect(r.code, r.stderr).to.equal(0);
      expect(JSON.parse(r.stdout).messages[0]).to.deep.equal({ role: 'user', content: 'the piped prompt' });
      expect(r.stderr).not.to.contain('the script prompt');
      expect(r.stderr).to.match(/^ {2}→ slow \{"ms":300\}$/m);
      expect(r.stderr).to.match(/^ {2}… slow \d+\/10 \(\d+%\) step \d+$/m);
      expect(r.stderr).to.match(/^ {2}✓ slow \(\d+ ms\): counted to 10$/m);
      expect(r.stderr).not.to.contain('\u001b');
    } finally {
      tmp.cleanup();
    }
  });

  it('lists saved sessions with --resume, and carries one on with --resume ID: a cut file loads to its last whole line, with a warning', async () => {
    const tmp = tempDir();
    const server = await startAnthropicServer([{ turn: { text: 'Still Ada.' } }]);
    try {
      tmp.write('rousseau.config.mjs', TOOLS_ONLY);
      const id = '2026-01-02T03-04-05-000Z-abcd';
      const whole = [
        { ts: '2026-01-02T03:04:05.000Z', type: 'session', id, provider: 'anthropic', model: 'm' },
        { ts: '2026-01-02T03:04:06.000Z', type: 'message', message: { role: 'user', content: 'I am Ada' } },
        {
          ts: '2026-01-02T03:04:07.000Z',
          type: 'message',
          message: { role: 'assistant', text: 'Hello, Ada.', toolCalls: [] },
        },
      ];
      const file = tmp.write(
        `.rousseau/sessions/${id}.jsonl`,
        `${whole.map((r) => JSON.stringify(r)).join('\n')}\n{"ts":"2026-01-02T03:04:08.000Z","type":"mess`,
      );
      const env = { ...NO_KEYS, ANTHROPIC_API_KEY: ANTHROPIC_TEST_KEY, ANTHROPIC_BASE_URL: server.url };
      const listed = await runCli(['start', '--resume'], { cwd: tmp.dir, env });
      expect(listed.code, listed.stderr).to.equal(0);
      expect(listed.stderr).to.match(new RegExp(`${id} .* 2 msg {2}I am Ada`));

      const r = await runCli(['start', '--resume', id, '-p', 'Who am I?'], { cwd: tmp.dir, env });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.equal('Still Ada.\n');
      expect(r.stderr).to.contain(`session ${id}: the file ends in a cut line; loaded the 3 whole line(s) before it`);
      expect(server.requests[0]!.body.messages).to.deep.equal([
        { role: 'user', content: [{ type: 'text', text: 'I am Ada' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Hello, Ada.' }] },
        // The last block carries the prompt-cache mark (docs/agent.md, prompt caching).
        { role: 'user', content: [{ type: 'text', text: 'Who am I?', cache_control: { type: 'ephemeral' } }] },
      ]);
      // The cut line is gone, the new messages follow the whole ones: the file reads cleanly again.
      const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
      expect(lines.map((line) => JSON.parse(line).type)).to.deep.equal([
        'session',
        'message',
        'message',
        'message',
        'message',
        'usage',
      ]);
      expect(lines.join('\n')).not.to.contain(ANTHROPIC_TEST_KEY);

      const empty = tempDir();
      const none = await runCli(['start', '--continue', '-p', 'x'], { cwd: empty.dir, env }).finally(empty.cleanup);
      expect(none.code, none.stderr).to.equal(2);
      expect(none.stderr).to.contain('--continue: no saved session in');
    } finally {
      await server.close();
      tmp.cleanup();
    }
  });

  it('serves the tools over MCP on stdio with --mcp', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    };
    const r = await runCliProcess(['start', '--mcp', '--cwd', join(ROOT, 'examples', 'demo')], {
      input: `${JSON.stringify(init)}\n`,
      env: NO_KEYS,
    });
    expect(r.code, r.stderr).to.equal(0);
    for (const line of r.stdout.split('\n').filter(Boolean))
      expect(JSON.parse(line)).to.have.property('jsonrpc', '2.0');
  });
});
