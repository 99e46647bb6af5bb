/**
 * Logging. Everything goes to stderr: stdout belongs to `--json` output and MCP messages. Human
 * lines on a terminal, JSON lines otherwise; colour only on a terminal without NO_COLOR (winston's
 * colorize ignores both, so we decide). The audit trail is a separate JSON-lines file.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import winston from 'winston';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export type Logger = winston.Logger;

export interface LoggerOptions {
  level?: LogLevel | string;
  /** JSON lines instead of human lines; defaults to "stderr is not a terminal". */
  json?: boolean;
}

export function createLogger({ level = 'info', json = !process.stderr.isTTY }: LoggerOptions = {}): Logger {
  const { combine, timestamp, errors, printf, colorize, json: jsonFormat } = winston.format;
  const useColor = Boolean(process.stderr.isTTY) && !process.env.NO_COLOR;
  const human = printf(({ level: lvl, message, timestamp: _t, service: _s, stack, ...meta }) => {
    const scope = [meta.plugin, meta.tool].filter(Boolean).join('/');
    delete meta.plugin;
    delete meta.tool;
    const rest = Object.keys(meta).length ? ` ${JSON.stringify(meta)}` : '';
    return `${lvl} ${scope ? `[${scope}] ` : ''}${String(message)}${rest}${stack && level === 'debug' ? `\n${String(stack)}` : ''}`;
  });
  return winston.createLogger({
    level,
    exitOnError: false,
    format: combine(errors({ stack: true }), timestamp()),
    transports: [
      new winston.transports.Console({
        stderrLevels: Object.keys(winston.config.npm.levels),
        format: json ? jsonFormat() : combine(...(useColor ? [colorize()] : []), human),
      }),
    ],
  });
}

/** One audit record: a decision or a call outcome (DESIGN §2). */
export interface AuditRecord {
  event: 'decision' | 'call' | 'plugin';
  [key: string]: unknown;
}

export interface AuditSink {
  /** False when auditing is off: the dispatcher then skips building records. */
  readonly enabled: boolean;
  write(record: AuditRecord): void;
  close(): Promise<void>;
}

export const NO_AUDIT: AuditSink = { enabled: false, write() {}, async close() {} };

/** Appends JSON lines to `file` through winston's File transport; `close()` waits for the flush. */
export function createAuditSink(file: string): AuditSink {
  mkdirSync(dirname(file), { recursive: true });
  const transport = new winston.transports.File({ filename: file, format: winston.format.json() });
  const logger = winston.createLogger({ level: 'info', levels: { info: 0 }, transports: [transport], exitOnError: false });
  return {
    enabled: true,
    write(record) {
      logger.info({ message: record.event, time: new Date().toISOString(), ...record });
    },
    close() {
      return new Promise((resolve) => {
        transport.once('finish', () => resolve());
        logger.end();
      });
    },
  };
}
