/**
 * `rousseau-host start`: load the plugins and hand their tools to a model (a REPL on a terminal,
 * one turn with `-p` or piped stdin), or serve them over MCP (`--mcp`, `--mcp-http PORT`).
 *
 * Streams: the model's final answer (or the `--json` document) is the only thing on stdout, so
 * `start -p … > answer.txt` works; the tool call lines and the intermediate text go to stderr. In
 * the REPL the answer streams to stdout as it arrives.
 */
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { Agent, type AgentEvent, type RunResult } from '../agent/agent.ts';
import { ProviderError, type Provider } from '../agent/messages.ts';
import { createProvider, PROVIDER_NAMES, providerFromEnv, type ProviderSettings } from '../agent/providers/index.ts';
import { loadReplayScript, replayProvider } from '../agent/providers/replay.ts';
import type { Host } from '../host.ts';
import type { PluginStatus, ToolInfo } from '../types.ts';
import { watchPlugins } from '../watch.ts';
import { terminalApprover } from './approve-prompt.ts';
import {
  EXIT,
  hostFromFlags,
  print,
  printError,
  printJson,
  readStdin,
  UsageError,
  write,
  type Command,
  type Values,
} from './command.ts';
import type { Stop } from './signals.ts';

const NO_PROVIDER_HELP = [
  'No model provider is configured. Set one of:',
  '  export ANTHROPIC_API_KEY=sk-ant-…                      # Anthropic (ANTHROPIC_BASE_URL for a proxy)',
  '  export OPENAI_API_KEY=sk-…                             # OpenAI, or any compatible server with',
  '  export OPENAI_BASE_URL=http://localhost:11434/v1       #   its base URL (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter)',
  "or add provider: { name: 'anthropic' | 'openai', model: '…' } to rousseau.config.ts,",
  'or pass --provider anthropic|openai [--model M], or --replay FILE to play a scripted conversation.',
  'To see it work offline first: npm start (plays the bundled demo).',
].join('\n');

const DEFAULT_SYSTEM =
  'You are a capable assistant with tools. Use them when they help. When a tool result is an error, read it: fix your input and retry, or try another way; never repeat a call that was denied.';

export const start: Command = {
  name: 'start',
  summary:
    'Run the agent with the loaded tools: a REPL on a terminal, one turn with -p PROMPT or a prompt piped on stdin (the answer on stdout; --json for the whole run). --mcp serves the tools over MCP on stdio instead, --mcp-http PORT over HTTP. --watch reloads a plugin when its files change (/reload in the REPL does it by hand). Exit 0 answered, 1 failed, 130 interrupted (143 SIGTERM, 129 SIGHUP).',
  usage:
    'start [-p PROMPT] [--provider anthropic|openai|replay] [--model M] [--replay FILE] [--yes] [--json] [--watch] | start --mcp [--watch] | start --mcp-http PORT [--watch]',
  options: {
    prompt: { type: 'string', short: 'p' },
    provider: { type: 'string' },
    model: { type: 'string' },
    replay: { type: 'string' },
    yes: { type: 'boolean', short: 'y' },
    mcp: { type: 'boolean' },
    'mcp-http': { type: 'string' },
    watch: { type: 'boolean' },
  },
  async run({ values, positionals, stop }) {
    if (positionals.length)
      throw new UsageError(
        `start takes no positional arguments (got "${positionals.join(' ')}"); pass the prompt with -p`,
      );
    if (values.mcp || values['mcp-http'] !== undefined) return serveMcp(values, stop.signal);

    const interactive =
      typeof values.prompt !== 'string' && !values.json && Boolean(process.stdin.isTTY && process.stdout.isTTY);
    const approve = values.yes ? () => true : terminalApprover();
    const host = await hostFromFlags(values, approve ? { approve } : {});
    const stopWatching = values.watch ? startWatching(host) : undefined;
    try {
      const settings = providerSettings(values, host);
      if (!settings) {
        printError(`rousseau-host start: ${NO_PROVIDER_HELP}`);
        return EXIT.failure;
      }
      let provider: Provider;
      let scripted: string | undefined;
      try {
        if (settings.name === 'replay') {
          if (!settings.file)
            throw new ProviderError(
              'bad_response',
              'The replay provider needs a script: set provider.file in the config, or pass --replay FILE.',
            );
          const file = resolve(
            typeof values.replay === 'string' ? process.cwd() : configDir(host, values),
            settings.file,
          );
          const script = loadReplayScript(file);
          scripted = script.prompt;
          provider = replayProvider({ script, file });
        } else {
          provider = createProvider(settings, { dir: configDir(host, values), log: host.log });
        }
      } catch (error) {
        if (!(error instanceof ProviderError)) throw error;
        printError(
          `rousseau-host start: ${error.message}${error.code === 'no_api_key' ? `\n\n${NO_PROVIDER_HELP}` : ''}`,
        );
        return EXIT.failure;
      }
      const agentConfig = host.config.agent ?? {};
      const agent = new Agent({
        host,
        provider,
        system: agentConfig.system ?? `${DEFAULT_SYSTEM}\nThe workspace is ${host.workspace}.`,
        ...(agentConfig.maxTurns ? { maxTurns: agentConfig.maxTurns } : {}),
        ...(agentConfig.maxRepeatedFailures ? { maxRepeatedFailures: agentConfig.maxRepeatedFailures } : {}),
      });
      if (interactive && !scripted) return await repl(agent, host, stop);

      let prompt = typeof values.prompt === 'string' ? values.prompt : undefined;
      if (prompt === undefined && !process.stdin.isTTY && !scripted) prompt = (await readStdin(stop.signal)).trim();
      if (prompt === undefined && scripted) {
        prompt = scripted;
        printError(`you: ${prompt}`);
      }
      if (!prompt) throw new UsageError('no prompt: pass -p PROMPT, or pipe it on stdin');
      return await once(agent, prompt, values.json === true, stop.signal);
    } finally {
      stopWatching?.();
      await host.close();
    }
  },
};

/** `--watch`: reloads each plugin loaded from a file when its files change, and says what changed on stderr. */
function startWatching(host: Host): () => void {
  let known = host.tools();
  const watching = watchPlugins(host, {
    onReload: (statuses) => {
      for (const line of describeReload(statuses, known, host.tools())) printError(line);
      known = host.tools();
    },
  });
  for (const [source, root] of watching.roots) printError(`rousseau-host: watching ${root} for ${source}`);
  return watching.stop;
}

/**
 * One line per plugin a reload went through: which tools it added, changed or removed, or that the
 * previous version still serves (the reason was logged as a warning just before).
 */
export function describeReload(
  statuses: readonly PluginStatus[],
  before: readonly ToolInfo[],
  after: readonly ToolInfo[],
): string[] {
  return statuses.map((status) => {
    if (status.reloadError) return `${status.name}: the reload failed; the previous version still serves`;
    if (status.status === 'failed') return `${status.name}: still failing, nothing of it is served`;
    const was = new Map(before.filter((t) => t.plugin === status.name).map((t) => [t.name, JSON.stringify(t)]));
    const now = after.filter((t) => t.plugin === status.name);
    const changes = [
      ...now.filter((t) => !was.has(t.name)).map((t) => `+${t.name}`),
      ...now.filter((t) => was.has(t.name) && was.get(t.name) !== JSON.stringify(t)).map((t) => `~${t.name}`),
      ...[...was.keys()].filter((name) => !now.some((t) => t.name === name)).map((name) => `-${name}`),
    ];
    return `reloaded ${status.name}: ${changes.length ? changes.join(' ') : 'same tools'}`;
  });
}

/** `--provider` (with the config's settings for that provider), `--replay`, then the config, then the environment. */
function providerSettings(values: Values, host: Host): ProviderSettings | undefined {
  const configured = host.config.provider;
  let settings: ProviderSettings | undefined;
  if (typeof values.replay === 'string') settings = { name: 'replay', file: values.replay };
  else if (typeof values.provider === 'string') {
    const name = values.provider as ProviderSettings['name'];
    if (!PROVIDER_NAMES.includes(name))
      throw new UsageError(`--provider must be one of ${PROVIDER_NAMES.join(', ')}; got "${values.provider}"`);
    settings = configured?.name === name ? configured : { name };
  } else settings = configured ?? providerFromEnv();
  if (settings && typeof values.model === 'string') settings = { ...settings, model: values.model };
  return settings;
}

function configDir(host: Host, values: Values): string {
  return host.configFile
    ? dirname(host.configFile)
    : resolve(typeof values.cwd === 'string' ? values.cwd : process.cwd());
}

/** One run: the transcript on stderr, the answer (or `--json`) on stdout. */
async function once(agent: Agent, prompt: string, json: boolean, signal: AbortSignal): Promise<number> {
  const transcript = new Transcript({ streamText: false });
  const result = await agent.run(prompt, { signal, onEvent: (e) => transcript.show(e) });
  if (json)
    printJson({ provider: agent.provider.name, model: agent.provider.model, ...result, messages: agent.messages });
  else if (result.text) print(result.text);
  transcript.summary(result);
  return exitCode(result);
}

/**
 * The REPL: each line is a run; Ctrl-C cancels the run in flight, twice at the prompt exits.
 * SIGTERM and SIGHUP end it wherever it is. `/reload [PLUGIN]` loads plugins again from their files.
 */
async function repl(agent: Agent, host: Host, stop: Stop): Promise<number> {
  printError(
    `rousseau-host: ${agent.provider.name} (${agent.provider.model}). Ctrl-C cancels a turn; Ctrl-C twice or Ctrl-D exits; /reload [PLUGIN] reloads plugins.`,
  );
  const transcript = new Transcript({ streamText: true });
  let interruptedAt = 0;
  while (!stop.signal.aborted) {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    const line = await new Promise<string | undefined>((done) => {
      rl.on('SIGINT', () => {
        if (Date.now() - interruptedAt < 2000) return done(undefined);
        interruptedAt = Date.now();
        printError('\n(press Ctrl-C again to exit)');
        rl.prompt();
      });
      rl.on('close', () => done(undefined));
      rl.question('\nyou> ', { signal: stop.signal }).then(done, () => done(undefined));
    });
    rl.close();
    if (line === undefined) return EXIT.ok;
    if (!line.trim()) continue;
    const reload = /^\/reload(?:\s+(\S+))?\s*$/.exec(line.trim());
    if (reload) {
      const before = host.tools();
      const statuses = await host.reload(reload[1]);
      if (!statuses.length) printError(`no plugin named "${reload[1]}"`);
      for (const change of describeReload(statuses, before, host.tools())) printError(change);
      continue;
    }
    const turn = new AbortController();
    const release = stop.onInterrupt(() => {
      printError('\n(cancelling the turn)');
      turn.abort();
    });
    try {
      const result = await agent.run(line, {
        signal: AbortSignal.any([turn.signal, stop.signal]),
        onEvent: (e) => transcript.show(e),
      });
      transcript.summary(result);
    } finally {
      release();
    }
  }
  return EXIT.interrupted;
}

function exitCode(result: RunResult): number {
  if (result.stopReason === 'aborted') return EXIT.interrupted;
  return result.stopReason === 'end_turn' || result.stopReason === 'refusal' ? EXIT.ok : EXIT.failure;
}

/** Renders events: each call as one line, its outcome as another; the model's text between them. */
class Transcript {
  private pending = '';
  private readonly streamText: boolean;
  constructor(options: { streamText: boolean }) {
    this.streamText = options.streamText;
  }

  show(event: AgentEvent): void {
    switch (event.type) {
      case 'text_delta':
        if (this.streamText) write(event.text);
        break;
      case 'text':
        if (this.streamText) write('\n');
        else this.pending = event.text;
        break;
      case 'tool_call':
        this.flush();
        printError(`  → ${event.tool} ${clip(event.call.arguments, 160)}`);
        break;
      case 'tool_result': {
        const { result } = event;
        const mark = result.isError ? `✗ ${result.code ?? 'error'}` : '✓';
        printError(`  ${mark} ${event.call.name} (${Math.round(result.durationMs)} ms): ${clip(result.content, 200)}`);
        break;
      }
      case 'error':
        this.flush();
        printError(`  ! ${event.error.message}`);
        break;
    }
  }

  /** Text of a turn that went on to call tools is narration: stderr. The last turn's text is the answer. */
  private flush(): void {
    if (this.pending) printError(this.pending);
    this.pending = '';
  }

  summary(result: RunResult): void {
    this.pending = '';
    const tokens =
      result.usage.inputTokens || result.usage.outputTokens
        ? `, ${result.usage.inputTokens} in / ${result.usage.outputTokens} out tokens`
        : '';
    printError(`  [${result.stopReason}: ${result.turns} turn(s), ${result.toolCalls} tool call(s)${tokens}]`);
  }
}

function clip(text: string, max: number): string {
  const line = text.replace(/\s*\n\s*/g, ' ⏎ ');
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** `--mcp` / `--mcp-http PORT`: serve every loaded tool over MCP until the client leaves or a stop signal. */
async function serveMcp(values: Values, signal: AbortSignal): Promise<number> {
  const port = values['mcp-http'] === undefined ? undefined : Number(values['mcp-http']);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65535))
    throw new UsageError(`--mcp-http takes a port number; got "${String(values['mcp-http'])}"`);
  const approve = values.yes ? () => true : undefined; // stdin belongs to the MCP client: no prompts
  const { serveMcpStdio, serveMcpHttp } = await import('../mcp/serve.ts');
  // On stdio, stdout is the MCP channel from the first byte; main.ts guards it before plugins load.
  const host = await hostFromFlags(values, approve ? { approve } : {});
  const stopWatching = values.watch ? startWatching(host) : undefined;
  try {
    if (port === undefined) {
      await serveMcpStdio(host, { signal });
    } else {
      const server = await serveMcpHttp(host, { port, signal });
      printError(`rousseau-host: serving ${host.tools().length} tools over MCP at ${server.url} (Ctrl-C stops)`);
      await new Promise<void>((done) =>
        signal.aborted ? done() : signal.addEventListener('abort', () => done(), { once: true }),
      );
      await server.close();
    }
    return EXIT.ok;
  } finally {
    stopWatching?.();
    await host.close();
  }
}
