import { expect } from 'chai';
import { join } from 'node:path';
import { ANTHROPIC_TEST_KEY, startAnthropicServer } from '../fixtures/providers/anthropic-server.ts';
import { OPENAI_TEST_KEY, startOpenAIServer } from '../fixtures/providers/openai-server.ts';
import { cliInTerminal, ROOT, runCli, tempDir } from '../helpers.ts';

/** No key in the environment: what a fresh clone sees. */
const NO_KEYS = { ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', OPENAI_BASE_URL: '', ANTHROPIC_BASE_URL: '' };
const TOOLS_ONLY = `export default { builtins: false, log: { audit: false } };\n`;

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
        "provider: { name: 'anthropic'",
        '--provider',
        'npm start',
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
        { role: 'user', content: [{ type: 'text', text: 'Capital of France?' }] },
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
      const r = await runCli(['start', '--provider', 'openai', '--model', 'local-model', '--json'], {
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
      expect(usage.stderr).to.contain('--provider must be one of anthropic, openai, replay');
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
        // biome-ignore lint/suspicious/noControlCharactersInRegex: what it checks is that none of them reaches the terminal
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

  it('serves the tools over MCP on stdio with --mcp', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    };
    const r = await runCli(['start', '--mcp', '--cwd', join(ROOT, 'examples', 'demo')], {
      input: `${JSON.stringify(init)}\n`,
      env: NO_KEYS,
    });
    expect(r.code, r.stderr).to.equal(0);
    for (const line of r.stdout.split('\n').filter(Boolean))
      expect(JSON.parse(line)).to.have.property('jsonrpc', '2.0');
  });
});

describe('rousseau-host start on a terminal (REPL)', function () {
  this.timeout(30_000);

  it('streams each answer, shows the calls, keeps the conversation, cancels a turn on Ctrl-C, and exits on Ctrl-C twice', async () => {
    const tmp = tempDir();
    const script = tmp.write(
      'repl.json',
      JSON.stringify({
        turns: [
          { text: 'Looking.', toolCalls: [{ name: 'ls', input: {} }] },
          { text: 'First answer.' },
          { text: 'Second answer.' },
          { toolCalls: [{ name: 'bash', input: { command: 'sleep 20' } }] },
        ],
      }),
    );
    tmp.write(
      'rousseau.config.mjs',
      `export default { builtins: ['fs', 'shell'], policy: { allow: [{ tool: 'bash' }] }, log: { audit: false } };\n`,
    );
    const terminal = cliInTerminal(['start', '--replay', script], { cwd: tmp.dir, env: NO_KEYS });
    const { waitFor } = terminal;
    try {
      await waitFor(/you> /);
      terminal.type('hello\r');
      await waitFor(/First answer\./);
      await waitFor(/you> /, 2);
      terminal.type('again\r');
      await waitFor(/Second answer\./);
      await waitFor(/you> /, 3);
      terminal.type('wait\r');
      await waitFor(/→ bash/);
      terminal.type('\x03');
      await waitFor(/✗ cancelled bash/);
      await waitFor(/you> /, 4);
      terminal.type('\x03');
      await waitFor(/press Ctrl-C again to exit/);
      terminal.type('\x03');
      expect(await terminal.closed).to.equal(0);
      expect(terminal.output).to.match(/→ ls \{\}/);
      expect(terminal.output).to.match(/✓ ls \(\d+ ms\): .*repl\.json/);
      expect(terminal.output).to.contain('[aborted: 1 turn(s), 1 tool call(s)]');
    } finally {
      terminal.kill();
      tmp.cleanup();
    }
  });
});
