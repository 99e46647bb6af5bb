// Embedding the host and the agent loop in a script (docs/agent.md).
//
//   npm run build && npx tsx examples/embed-agent/index.ts "What is in README.md?"
//
// With ANTHROPIC_API_KEY (or OPENAI_API_KEY) set it asks that model; without one it plays a short
// scripted turn, so it runs offline too. Either way the tool calls are real: they go through the
// host's pipeline (validation, policy, timeouts, output cap).
import { fileURLToPath } from 'node:url';
import { Agent, anthropicProvider, createHost, openaiProvider, replayProvider, type Provider } from 'rousseau-host';

const workspace = fileURLToPath(new URL('../..', import.meta.url));
const prompt = process.argv[2] ?? 'What is in README.md? One sentence.';

const host = await createHost({
  cwd: workspace,
  // An object config skips discovery: only what is written here loads.
  config: {
    builtins: ['fs'],
    policy: { default: 'deny', allow: [{ tool: 'read' }, { tool: 'ls' }] },
    log: { audit: false },
  },
});

const provider: Provider = process.env.ANTHROPIC_API_KEY
  ? anthropicProvider()
  : process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL
    ? openaiProvider()
    : replayProvider({
        script: {
          turns: [
            { text: 'Let me look.', toolCalls: [{ name: 'read', input: { path: 'README.md', limit: 5 } }] },
            { text: 'README.md introduces rousseau-host: a host that loads LLM tools as plugins.' },
          ],
        },
      });

const agent = new Agent({ host, provider, system: 'Answer briefly. Use the tools to look at files.', maxTurns: 8 });
const controller = new AbortController();
process.once('SIGINT', () => controller.abort());

try {
  const result = await agent.run(prompt, {
    signal: controller.signal,
    onEvent(event) {
      if (event.type === 'tool_call') process.stderr.write(`→ ${event.tool} ${event.call.arguments}\n`);
      if (event.type === 'tool_result')
        process.stderr.write(
          `${event.result.isError ? `✗ ${event.result.code}` : '✓'} ${event.call.name} (${Math.round(event.result.durationMs)} ms)\n`,
        );
    },
  });
  process.stdout.write(`${result.text}\n`);
  process.stderr.write(
    `[${result.stopReason}, ${result.turns} turns, ${result.usage.inputTokens}/${result.usage.outputTokens} tokens]\n`,
  );
  process.exitCode = result.stopReason === 'end_turn' ? 0 : 1;
} finally {
  await host.close();
}
