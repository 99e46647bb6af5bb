/**
 * `rousseau-host`: finds the command, parses its flags, runs it, exits.
 *
 * Commands load lazily, so `--version` and `--help` cost a bare node start. A one-shot command
 * exits as soon as its answer is printed, even if a plugin left timers or handles behind.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { HOST_INFO } from '../identity.ts';
import { guardStdout } from '../mcp/stdout-guard.ts';
import { EXIT, GLOBAL_OPTIONS, print, printError, reportError, type Command } from './command.ts';
import { signalExitCode, trapStopSignals } from './signals.ts';
import { messageOf } from '../errors.ts';
import { flushRegisteredTracing, startTracingFromEnv } from './otel.ts';

/** Each command in its own module, imported only when it runs. A Map: a name like `toString` is no command. */
const COMMANDS = new Map<string, { summary: string; load: () => Promise<Command> }>(
  Object.entries({
    start: {
      summary: 'run the agent with the loaded tools (REPL, or -p PROMPT), or serve them over MCP (--mcp)',
      load: async () => (await import('./start.ts')).start,
    },
    serve: {
      summary: 'serve the loaded tools to a team over MCP on HTTP, with authentication and graceful shutdown',
      load: async () => (await import('./serve.ts')).serve,
    },
    tools: {
      summary: 'list every plugin with its status and its tools',
      load: async () => (await import('./tools.ts')).tools,
    },
    check: {
      summary: 'load one plugin module and run the contract check (no config needed)',
      load: async () => (await import('./check.ts')).check,
    },
    call: { summary: 'call one tool through the whole pipeline', load: async () => (await import('./call.ts')).call },
    policy: {
      summary: 'policy check TOOL JSON: the decision, the rule and the canonical input',
      load: async () => (await import('./policy.ts')).policy,
    },
    init: { summary: 'write a commented rousseau.config.ts', load: async () => (await import('./init.ts')).init },
    add: {
      summary: 'install a plugin package (name, tarball, folder, git URL) and add it to the config',
      load: async () => (await import('./plugins-command.ts')).add,
    },
    remove: {
      summary: 'take a plugin out of the config and uninstall its package',
      load: async () => (await import('./plugins-command.ts')).remove,
    },
  }),
);

const version = () => HOST_INFO.version;

function parseCommandArgs(args: string[], command: Command) {
  return parseArgs({ args, options: { ...GLOBAL_OPTIONS, ...command.options }, allowPositionals: true, strict: true });
}

/** Global flags that take a value: their value is not the command name. */
const VALUE_FLAGS = new Set(['--config', '-c', '--cwd', '-C', '--log-level']);

function commandName(argv: string[]): { name: string | undefined; index: number } {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (VALUE_FLAGS.has(a)) i++;
    else if (!a.startsWith('-')) return { name: a, index: i };
  }
  return { name: undefined, index: -1 };
}

function globalHelp(): string {
  const width = Math.max(...[...COMMANDS.keys()].map((c) => c.length));
  return [
    'rousseau-host: load LLM tools as plugins, check them, call them, serve them to an agent or over MCP.',
    '',
    'Usage: rousseau-host <command> [flags]',
    '',
    'Commands:',
    ...[...COMMANDS].map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Global flags:',
    '  -c, --config FILE     use this config instead of searching for rousseau.config.*',
    '  -C, --cwd DIR         run as if started in DIR (config search, workspace)',
    '      --log-level L     error | warn | info | debug (logs go to stderr)',
    '      --json            one JSON document on stdout',
    '  -h, --help            help (rousseau-host <command> --help for a command)',
    '  -V, --version         print the version',
    '',
    'Exit codes: 0 ok, 1 failure, 2 usage error; stopped by a signal: 130 Ctrl-C (SIGINT), 143 SIGTERM, 129 SIGHUP.',
  ].join('\n');
}

function commandHelp(command: Command): string {
  return `Usage: rousseau-host ${command.usage}\n\n${command.summary}\n\nRun rousseau-host --help for the global flags.`;
}

/** Prints an answer that needs no command to run (help, version): exit 0. */
function printed(text: string): number {
  print(text);
  return EXIT.ok;
}

export async function main(argv: string[]): Promise<number> {
  const { name, index } = commandName(argv);
  const wantsJson = argv.includes('--json');
  const entry = name === undefined ? undefined : COMMANDS.get(name);
  if (!entry) {
    if (argv.includes('--version') || argv.includes('-V')) return printed(version());
    if (argv.includes('--help') || argv.includes('-h') || argv.length === 0) return printed(globalHelp());
    const problem = name ? `unknown command "${name}"` : 'no command given';
    printError(`rousseau-host: ${problem}\n\n${globalHelp()}`);
    if (wantsJson) print(JSON.stringify({ error: { code: 'RH_ERR_USAGE', message: problem } }));
    return EXIT.usage;
  }
  const command = await entry.load();
  let parsed: ReturnType<typeof parseCommandArgs>;
  try {
    parsed = parseCommandArgs(
      argv.filter((_, i) => i !== index),
      command,
    );
  } catch (error) {
    printError(`rousseau-host ${name}: ${messageOf(error)}\n\n${commandHelp(command)}`);
    if (wantsJson) print(JSON.stringify({ error: { code: 'RH_ERR_USAGE', message: messageOf(error) } }));
    return EXIT.usage;
  }
  if (parsed.values.help) return printed(commandHelp(command));
  if (parsed.values.version) return printed(version());
  // From here until the command returns, stdout is the CLI's: what plugins print goes to stderr.
  const guard = guardStdout();
  const stop = trapStopSignals();
  // Started under the guard: an SDK exporting to the console writes to stderr, never into --json or MCP.
  const warnTracing = (m: string) => printError(`rousseau-host: ${m}`);
  const endTracing = await startTracingFromEnv(
    resolve(typeof parsed.values.cwd === 'string' ? parsed.values.cwd : '.'),
    warnTracing,
  );
  try {
    const code = await command
      .run({ values: parsed.values, positionals: parsed.positionals, stop })
      .catch((error: unknown) => {
        // Stopped while reading stdin: the signal is the news, not the AbortError it caused.
        if (stop.received && (error as Error | undefined)?.name === 'AbortError') return EXIT.failure;
        const code = reportError(error, parsed.values.json === true);
        if (code === EXIT.usage) printError(`\n${commandHelp(command)}`);
        return code;
      });
    return stop.received && !stop.clean ? signalExitCode(stop.received) : code;
  } finally {
    await (endTracing ? endTracing() : flushRegisteredTracing(warnTracing));
    stop.release();
    guard.restore();
  }
}

/** Runs the CLI and exits once stdout has drained. */
export async function run(): Promise<void> {
  const code = await main(process.argv.slice(2));
  process.stdout.write('', () => process.exit(code));
}
