/**
 * Logging. Everything goes to stderr: stdout belongs to `--json` output and MCP messages. Human
 * lines on a terminal, JSON lines otherwise; colour only on a terminal without NO_COLOR (winston's
 * colorize ignores both, so we decide). The audit trail is audit.ts.
 */
import { createRequire } from 'node:module';
import type Winston from 'winston';
import type TransportStream from 'winston-transport';
import type { PluginLogger } from './contract.ts';
import { terminalSafe } from './terminal-text.ts';

/** The levels the host and plugins log at, most severe first: config, CLI, plugins and isolates all take these. */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(level: unknown): level is LogLevel {
  return (LOG_LEVELS as readonly unknown[]).includes(level);
}

/** The host's logger: what plugins get (`PluginLogger`), plus a level-taking `log` and scoped children. */
export interface Logger extends PluginLogger {
  log(level: string, message: string, meta?: Record<string, unknown>): void;
  child(meta: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  level?: LogLevel | string;
  /** JSON lines instead of human lines; defaults to "stderr is not a terminal". */
  json?: boolean;
}

// winston is CommonJS, so it can load synchronously on first use: a command that logs nothing
// (`tools` with every plugin healthy) never pays its ~80 ms import.
const require = createRequire(import.meta.url);
let winstonModule: typeof Winston | undefined;
const loadWinston = (): typeof Winston => (winstonModule ??= require('winston') as typeof Winston);

/** triple-beam's key of the line winston's formats built. */
const MESSAGE = Symbol.for('message');

const SEVERITY: Record<string, number> = { error: 0, warn: 1, info: 2, http: 3, verbose: 4, debug: 5, silly: 6 };

/** The most log lines kept while held; the rest are counted. */
const MAX_HELD_LINES = 1_000;
/** Log lines kept while a person answers a question on the terminal (`holdLog`); undefined when not held. */
let held: { lines: string[]; dropped: number } | undefined;

/**
 * Keeps log lines off stderr until `releaseLog`: called while a question is open on the terminal.
 * What a plugin logs is its own text: written then, a line could stand where the person reads the
 * question and ask about another call than the one they answer for.
 */
export function holdLog(): void {
  held ??= { lines: [], dropped: 0 };
}

/** Writes the log lines held since `holdLog`, and lets the next ones through. */
export function releaseLog(): void {
  const was = held;
  held = undefined;
  if (!was) return;
  for (const line of was.lines) process.stderr.write(line);
  if (was.dropped) process.stderr.write(`… ${was.dropped} more log lines while a question was open\n`);
}

/** stderr, unless held. */
function logLine(line: string): void {
  if (!held) process.stderr.write(line);
  else if (held.lines.length < MAX_HELD_LINES) held.lines.push(line);
  else held.dropped++;
}

/** A stderr logger; winston is created when the first message passes the level. */
export function createLogger({ level = 'info', json = !process.stderr.isTTY }: LoggerOptions = {}): Logger {
  let root: Winston.Logger | undefined;
  const sink = () => (root ??= createWinston(level, json));
  return new LazyLogger(sink, SEVERITY[level] ?? SEVERITY.info!, {});
}

class LazyLogger implements Logger {
  private readonly sink: () => Winston.Logger;
  private readonly threshold: number;
  private readonly meta: Record<string, unknown>;

  constructor(sink: () => Winston.Logger, threshold: number, meta: Record<string, unknown>) {
    this.sink = sink;
    this.threshold = threshold;
    this.meta = meta;
  }

  log(level: string, message: string, meta?: Record<string, unknown>): void {
    if ((SEVERITY[level] ?? 0) > this.threshold) return;
    // One info object: with (level, message, meta) winston treats `%` in the message as a format token and drops meta.
    this.sink().log({ ...this.meta, ...meta, level, message });
  }
  error(message: string, meta?: Record<string, unknown>): void {
    this.log('error', message, meta);
  }
  warn(message: string, meta?: Record<string, unknown>): void {
    this.log('warn', message, meta);
  }
  info(message: string, meta?: Record<string, unknown>): void {
    this.log('info', message, meta);
  }
  debug(message: string, meta?: Record<string, unknown>): void {
    this.log('debug', message, meta);
  }
  child(meta: Record<string, unknown>): Logger {
    return new LazyLogger(this.sink, this.threshold, { ...this.meta, ...meta });
  }
}

function createWinston(level: string, json: boolean): Winston.Logger {
  const winston = loadWinston();
  const { combine, timestamp, errors, printf, colorize, json: jsonFormat } = winston.format;
  const useColor = Boolean(process.stderr.isTTY) && !process.env.NO_COLOR;
  const human = printf(({ level: lvl, message, timestamp: _t, service: _s, stack, ...meta }) => {
    const scope = [meta.plugin, meta.tool].filter(Boolean).join('/');
    delete meta.plugin;
    delete meta.tool;
    const rest = Object.keys(meta).length ? ` ${JSON.stringify(meta)}` : '';
    // For a terminal: what plugins log must not move its cursor or reorder its text (terminal-text.ts).
    const line = terminalSafe(
      `${scope ? `[${scope}] ` : ''}${String(message)}${rest}${stack && level === 'debug' ? `\n${String(stack)}` : ''}`,
    );
    return `${lvl} ${line}`;
  });
  return winston.createLogger({
    level,
    exitOnError: false,
    format: combine(errors({ stack: true }), timestamp()),
    transports: [
      // Each line to `logLine` before `log` returns: a crash right after a line still shows it. Not
      // winston's Console transport, which cannot hold lines (`holdLog`); nor its Stream transport
      // over a Writable, which passed each line through one more stream (as a Buffer, decoded
      // back): 23% more instructions per line than this (callgrind).
      new (winston as unknown as { Transport: typeof TransportStream }).Transport({
        format: json ? jsonFormat() : combine(...(useColor ? [colorize()] : []), human),
        log(info: Record<symbol, unknown>, next: () => void) {
          logLine(`${String(info[MESSAGE])}\n`);
          next();
        },
      }),
    ],
  });
}
