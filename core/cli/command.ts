/**
 * What every CLI command is: a name, its own flags, and a `run` that returns the exit code. The
 * global flags and the shared plumbing (making a host from them, printing, exiting) live here too.
 */
import { addAbortSignal } from 'node:stream';
import type { ParseArgsConfig } from 'node:util';
import type { HostConfig } from '../config-schema.ts';
import type { Host, HostOptions } from '../host.ts';
import type { PluginStatus } from '../types.ts';
import { HostError, messageOf } from '../errors.ts';
import { writeStdout } from '../mcp/stdout-guard.ts';
import { hostIdProblem } from '../identity.ts';
import { jsonTextTooLong, MAX_JSON_TEXT_CHARS } from '../json-text.ts';
import { isLogLevel, LOG_LEVELS } from '../log.ts';
import { terminalSafe } from '../terminal-text.ts';
import type { Stop } from './signals.ts';

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface CommandArgs {
  values: Values;
  positionals: string[];
  /** Ctrl-C, SIGTERM, SIGHUP: cancel what runs, close the host, return (signals.ts). */
  stop: Stop;
}

export interface Command {
  name: string;
  /** One line for `--help`. */
  summary: string;
  /** The usage line after `rousseau-host`. */
  usage: string;
  options: Options;
  run(args: CommandArgs): Promise<number>;
}

/** Flags every command accepts. */
export const GLOBAL_OPTIONS: Options = {
  config: { type: 'string', short: 'c' },
  cwd: { type: 'string', short: 'C' },
  'log-level': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
};

export const EXIT = { ok: 0, failure: 1, usage: 2, interrupted: 130 } as const;

/**
 * A usage error: `RH_ERR_USAGE`, exit 2, with the command's usage line. The one way to raise that
 * code: a `HostError` like every other, so `--json` and the exit code read it from `code` alone.
 */
export class UsageError extends HostError {
  constructor(message: string) {
    super('RH_ERR_USAGE', message);
  }
}

/** The host the global flags describe. */
export async function hostFromFlags(values: Values, extra: Partial<HostOptions> = {}): Promise<Host> {
  const { createHost } = await import('../host.ts');
  const logLevel = typeof values['log-level'] === 'string' ? values['log-level'] : undefined;
  if (logLevel && !isLogLevel(logLevel)) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}; got "${logLevel}"`);
  }
  // A command that serves declares `--host-id`; the others take the id from the environment.
  const hostId = typeof values['host-id'] === 'string' ? values['host-id'] : undefined;
  const badId = hostId === undefined ? undefined : hostIdProblem(hostId);
  if (badId) throw new UsageError(`--host-id: ${badId}`);
  return createHost({
    ...(hostId === undefined ? {} : { hostId }),
    ...(typeof values.cwd === 'string' ? { cwd: values.cwd } : {}),
    ...(typeof values.config === 'string' ? { configFile: values.config } : {}),
    ...(logLevel ? { logLevel } : { logLevel: 'warn' }),
    ...extra,
  });
}

/**
 * Loads one plugin entry alone (no built-ins, no audit) in `cwd` and tells how it went: `check`'s
 * answer. The failure is the command's to tell, so the loader's own log line about it is quiet
 * unless `--log-level` asks.
 */
export async function loadAlone(
  values: Values,
  cwd: string,
  entry: PluginConfigEntry,
): Promise<PluginStatus | undefined> {
  const host = await hostFromFlags(values, {
    cwd,
    config: { builtins: false, plugins: [entry] },
    audit: false,
    ...(values['log-level'] === undefined ? { logLevel: 'error' } : {}),
  });
  const [plugin] = host.plugins();
  await host.close();
  return plugin;
}

type PluginConfigEntry = NonNullable<HostConfig['plugins']>[number];

/**
 * What the CLI prints carries text from models, plugins and servers. On a terminal it is escaped
 * (terminal-text.ts); stdout piped elsewhere is data and goes out as is, stderr is for people only.
 */
export function write(text: string): void {
  writeStdout(process.stdout.isTTY ? terminalSafe(text) : text);
}

/** Writes one JSON document on stdout. */
export function printJson(value: unknown): void {
  write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Writes text on stdout, ending with a newline. */
export function print(text: string): void {
  write(text.endsWith('\n') ? text : `${text}\n`);
}

/** Writes a message for people on stderr. */
export function printError(text: string): void {
  process.stderr.write(terminalSafe(text.endsWith('\n') ? text : `${text}\n`));
}

/** The error as `{ error: { code, message } }` for `--json`, and its exit code. */
export function reportError(error: unknown, json: boolean): number {
  const code = error instanceof HostError ? error.code : 'RH_ERR_INTERNAL';
  const message = messageOf(error);
  // The code names the error in docs/errors.md; a usage error has the usage line after it instead.
  printError(code === 'RH_ERR_USAGE' ? `rousseau-host: ${message}` : `rousseau-host: ${code}: ${message}`);
  if (json) printJson({ error: { code, message } });
  return code === 'RH_ERR_USAGE' ? EXIT.usage : EXIT.failure;
}

/** Reads all of stdin as text. */
export async function readStdin(signal: AbortSignal): Promise<string> {
  const chunks = (await process.stdin.toArray({ signal })) as Buffer[];
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Reads a call's JSON input from stdin, no further than the host's bound (`limits.maxInputChars`):
 * past it, the text read so far goes on, and the call refuses it, naming the bound.
 */
export async function readStdinInput(host: Host, signal: AbortSignal): Promise<string> {
  const limit = host.config.limits?.maxInputChars ?? MAX_JSON_TEXT_CHARS;
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of addAbortSignal(signal, process.stdin)) {
    text += decoder.decode(chunk as Buffer, { stream: true });
    if (text.length > limit) return text;
  }
  return text + decoder.decode();
}

/** A flag's JSON value (`--options`), refused past the bound on JSON text before it is parsed. */
export function parseJsonFlag(flag: string, text: string): unknown {
  const tooLong = jsonTextTooLong(text.length);
  if (tooLong) throw new UsageError(`${flag} is ${tooLong}`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag} is not JSON: ${messageOf(error)}`);
  }
}
