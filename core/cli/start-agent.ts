/**
 * `rousseau-host start` without `--mcp`: the agent on the loaded tools, a REPL on a terminal or one
 * turn (start.ts). Its own module, imported when a run starts: the agent loop, the providers and
 * the REPL are most of what `start` would otherwise load, and `start --mcp` needs none of them.
 */
import { dirname, resolve } from 'node:path';
import { Agent, type RunResult } from '../agent/agent.ts';
import { ProviderError, type Message, type Provider } from '../agent/messages.ts';
import { createProvider, PROVIDER_NAMES, providerFromEnv, type ProviderSettings } from '../agent/providers/index.ts';
import { loadReplayScript, replayProvider } from '../agent/providers/replay.ts';
import type { Host } from '../host.ts';
import { approverOn, terminalPrompt } from './approve-prompt.ts';
import { elicitorOn, headlessElicitor } from './elicit-prompt.ts';
import { EXIT, hostFromFlags, print, printError, printJson, readStdin, UsageError, type Values } from './command.ts';
import { describeReload, startWatching } from './reloads.ts';
import { describeSessions } from './repl/commands.ts';
import { Display } from './repl/display.ts';
import { repl } from './repl/repl.ts';
import { type LoadedSession, type Session, SessionStore } from './repl/sessions.ts';
import { colourFor } from './repl/style.ts';
import type { Stop } from './signals.ts';

const NO_PROVIDER_HELP = [
  'No model provider is configured. Set one of:',
  '  export ANTHROPIC_API_KEY=sk-ant-…                      # Anthropic (ANTHROPIC_BASE_URL for a proxy)',
  '  export OPENAI_API_KEY=sk-…                             # OpenAI, or any compatible server with',
  '  export OPENAI_BASE_URL=http://localhost:11434/v1       #   its base URL (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter)',
  '  export OPENAI_MODEL=qwen3                              #   and its model (default gpt-4.1); a local one needs no key',
  "or add provider: { name: 'anthropic' | 'openai', model: '…' } to rousseau.config.ts,",
  'or pass --provider anthropic|openai [--model M].',
  'To try it offline, with no key: --replay FILE plays a script of model turns that really calls your tools',
  '(the format: "Replay scripts" in docs/agent.md, also in node_modules/rousseau-host/docs/agent.md);',
  'in a clone of rousseau-host, npm start plays the bundled demo.',
].join('\n');

const DEFAULT_SYSTEM =
  'You are a capable assistant with tools. Use them when they help. When a tool result is an error, read it: fix your input and retry, or try another way; never repeat a call that was denied.';

/** The agent run: `resumeId` is `--resume`'s session, when one was named. */
export async function runAgent(values: Values, resumeId: string | undefined, stop: Stop): Promise<number> {
  const interactive =
    typeof values.prompt !== 'string' && !values.json && Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const display = new Display({
    live: Boolean(process.stderr.isTTY),
    colour: colourFor(process.stderr),
    streamText: interactive,
    ...(interactive ? { markdown: { colour: colourFor(process.stdout) } } : {}),
  });
  // Approvals and a tool's questions share the terminal: one dialog at a time.
  const terminal = terminalPrompt(display);
  const approve = values.yes ? () => true : terminal && approverOn(terminal);
  const host = await hostFromFlags(values, approve ? { approve } : {});
  // Reload lines go to stderr, and above the prompt once the REPL has one open.
  let notice = (line: string) => printError(line);
  const stopWatching = values.watch ? startWatching(host, (line) => notice(line)) : undefined;
  try {
    const store = new SessionStore(host.workspace);
    if (values.resume && resumeId === undefined) {
      if (values.json) printJson({ sessions: store.list() });
      else printError(describeSessions(store));
      return EXIT.ok;
    }
    const settings = providerSettings(values, host);
    if (!settings) {
      printError(`rousseau-host start: ${NO_PROVIDER_HELP}`);
      return EXIT.failure;
    }
    let makeProvider: (model?: string) => Provider;
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
        makeProvider = () =>
          replayProvider({ script, file, ...(settings.pricing ? { pricing: settings.pricing } : {}) });
      } else {
        const options = {
          dir: configDir(host, values),
          log: host.log,
          ...(host.config.pricing ? { prices: host.config.pricing } : {}),
        };
        makeProvider = (model) => createProvider(model ? { ...settings, model } : settings, options);
      }
      provider = makeProvider();
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      printError(
        `rousseau-host start: ${error.message}${error.code === 'no_api_key' ? `\n\n${NO_PROVIDER_HELP}` : ''}`,
      );
      return EXIT.failure;
    }
    const agentConfig = host.config.agent ?? {};
    // A tool's ctx.elicit is a form in the REPL; a one-shot run (-p, piped) has no one to fill it in.
    const elicit = interactive && !scripted && terminal ? elicitorOn(terminal) : headlessElicitor;
    // One provider until `/model` picks another: a replay script plays on across `/clear` and `/resume`.
    const makeAgent = (options: { sessionId?: string; messages?: readonly Message[]; model?: string } = {}) => {
      if (options.model) provider = makeProvider(options.model);
      return new Agent({
        host,
        provider,
        system: agentConfig.system ?? `${DEFAULT_SYSTEM}\nThe workspace is ${host.workspace}.`,
        elicit,
        ...(agentConfig.maxTurns ? { maxTurns: agentConfig.maxTurns } : {}),
        ...(agentConfig.maxRepeatedFailures ? { maxRepeatedFailures: agentConfig.maxRepeatedFailures } : {}),
        ...(options.sessionId ? { sessionId: options.sessionId } : {}),
        ...(options.messages ? { messages: options.messages } : {}),
      });
    };
    let resume: LoadedSession | undefined;
    if (values.continue || resumeId !== undefined) {
      const id = resumeId ?? store.latest();
      if (id === undefined) throw new UsageError(`--continue: no saved session in ${store.dir}`);
      resume = store.load(id);
    }
    if (interactive && !scripted) {
      return await repl({
        makeAgent,
        tools: () => host.tools(),
        reload: async (plugin) => {
          const before = host.tools();
          const statuses = await host.reload(plugin);
          if (!statuses.length) return [`no plugin named "${plugin}"`];
          return describeReload(statuses, before, host.tools());
        },
        notices: (write) => {
          notice = write;
        },
        store,
        display,
        stop,
        colour: colourFor(process.stderr),
        ...(resume ? { resume } : {}),
      });
    }

    // A prompt given (-p, or piped) wins over the replay script's: the script's is for when there is none.
    let prompt = typeof values.prompt === 'string' ? values.prompt : undefined;
    if (prompt === undefined && !process.stdin.isTTY) prompt = (await readStdin(stop.signal)).trim() || undefined;
    if (prompt === undefined && scripted) {
      prompt = scripted;
      printError(`you: ${prompt}`);
    }
    if (!prompt) throw new UsageError('no prompt: pass -p PROMPT, or pipe it on stdin');
    if (resume?.warning) printError(`rousseau-host: warning: ${resume.warning}`);
    const session = resume ? store.open(resume) : undefined;
    const agent = makeAgent(resume ? { sessionId: resume.id, messages: resume.messages } : {});
    try {
      return await once(agent, prompt, values.json === true, display, stop.signal, session);
    } finally {
      session?.close();
    }
  } finally {
    display.close();
    stopWatching?.();
    await host.close();
  }
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

/**
 * One run: the transcript on stderr, the answer (or `--json`) on stdout. An interrupted run has no
 * answer: its last text was cut short, so nothing goes to stdout but the `--json` document. A run
 * carrying on a saved session (`--continue`, `--resume`) appends to it.
 */
async function once(
  agent: Agent,
  prompt: string,
  json: boolean,
  display: Display,
  signal: AbortSignal,
  session: Session | undefined,
): Promise<number> {
  const before = agent.messages.length;
  const result = await agent.run(prompt, { signal, onEvent: (e) => display.show(e) });
  if (session) {
    for (const message of agent.messages.slice(before)) session.write({ type: 'message', message });
    session.write({ type: 'usage', usage: result.usage });
  }
  if (json)
    printJson({ provider: agent.provider.name, model: agent.provider.model, ...result, messages: agent.messages });
  else if (result.stopReason === 'aborted') printError('rousseau-host: interrupted; the run was cancelled, no answer.');
  // On a terminal the display has already streamed the answer to stdout: once is enough.
  else if (result.text && !display.streamsText) print(result.text);
  display.summary(result);
  return exitCode(result);
}

function exitCode(result: RunResult): number {
  if (result.stopReason === 'aborted') return EXIT.interrupted;
  return result.stopReason === 'end_turn' || result.stopReason === 'refusal' ? EXIT.ok : EXIT.failure;
}
