/**
 * `rousseau-host start`: load the plugins and hand their tools to a model (a REPL on a terminal,
 * one turn with `-p` or piped stdin), or serve them over MCP (`--mcp`, `--mcp-http PORT`).
 *
 * Streams: the model's final answer (or the `--json` document) is the only thing on stdout, so
 * `start -p … > answer.txt` works; the tool call lines and the intermediate text go to stderr. In
 * the REPL the answer streams to stdout as it arrives.
 */
import type { Host } from '../host.ts';
import { hostFromFlags, UsageError, type Command, type Values, EXIT } from './command.ts';
import { startWatching } from './reloads.ts';
import type { Stop } from './signals.ts';

export const start: Command = {
  name: 'start',
  summary:
    'Run the agent with the loaded tools: a REPL on a terminal, one turn with -p PROMPT or a prompt piped on stdin (the answer on stdout; --json for the whole run). --mcp serves the tools over MCP on stdio instead, --mcp-http PORT over HTTP (the server of `serve --port PORT`; with sessions, --stateless for none). --host-id ID names this host on its audit lines and session ids (default: $ROUSSEAU_HOST_ID, else hostname-pid). Exit 0 answered, 1 failed, 130 interrupted (143 SIGTERM, 129 SIGHUP).',
  usage:
    'start [-p PROMPT] [--provider anthropic|openai|openai-responses|replay] [--model M] [--replay FILE] [--yes] [--json] [--continue | --resume [ID]] [--watch] | start --mcp [--watch] | start --mcp-http PORT [--stateless] [--host-id ID] [--watch]',
  options: {
    prompt: { type: 'string', short: 'p' },
    provider: { type: 'string' },
    model: { type: 'string' },
    replay: { type: 'string' },
    yes: { type: 'boolean', short: 'y' },
    continue: { type: 'boolean' },
    resume: { type: 'boolean' },
    mcp: { type: 'boolean' },
    'mcp-http': { type: 'string' },
    stateless: { type: 'boolean' },
    'host-id': { type: 'string' },
    watch: { type: 'boolean' },
  },
  async run({ values, positionals, stop }) {
    const resumeId = values.resume ? positionals.shift() : undefined;
    if (positionals.length)
      throw new UsageError(
        `start takes no positional arguments (got "${positionals.join(' ')}"); pass the prompt with -p`,
      );
    if (values.mcp || values['mcp-http'] !== undefined) return serveMcp(values, stop);
    if (values.continue && values.resume) throw new UsageError('pass --continue or --resume, not both');
    // The agent, its providers and the REPL load for a run only: `start --mcp` serves without them.
    const { runAgent } = await import('./start-agent.ts');
    return runAgent(values, resumeId, stop);
  },
};

/**
 * `--mcp`: serve every loaded tool over MCP on stdio until the client leaves or a stop signal.
 * `--mcp-http PORT` is `serve --port PORT` (serve.ts), the one HTTP server.
 */
async function serveMcp(values: Values, stop: Stop): Promise<number> {
  if (values['mcp-http'] !== undefined) {
    const { serveHttp, parsePort } = await import('./serve.ts');
    return serveHttp(values, stop, {
      port: parsePort(values['mcp-http'], '--mcp-http'),
      ...(values.watch ? { watch: (host: Host) => startWatching(host) } : {}),
    });
  }
  if (values.stateless) throw new UsageError('--stateless applies to --mcp-http only');
  const approve = values.yes ? () => true : undefined; // stdin belongs to the MCP client: no prompts
  const { startMcpStdio } = await import('../mcp/stdio-start.ts');
  // On stdio, stdout is the MCP channel from the first byte; main.ts guards it before plugins load.
  // On stdio the server answers `initialize` while the plugins load (clients probe with short
  // timeouts), and lists each plugin's tools as it registers.
  const loading = hostFromFlags(values, { ...(approve ? { approve } : {}), loadInBackground: true });
  // The watch starts once every plugin is in: it watches the files of the plugins it finds.
  let served = false;
  const watching = loading.then(
    (host) =>
      values.watch
        ? host.ready.then(
            () => (served ? undefined : startWatching(host)),
            () => undefined,
          )
        : undefined,
    () => undefined,
  );
  try {
    await startMcpStdio(loading, { signal: stop.signal, askClient: !values.yes });
    return EXIT.ok;
  } finally {
    served = true;
    // Closing first gives up the loads still under way, which the watch waits for.
    await loading.then(
      (host) => host.close(),
      () => {},
    );
    (await watching)?.();
  }
}
