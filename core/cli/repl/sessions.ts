/**
 * Conversations saved in the workspace, one JSONL file each under `.rousseau/sessions/`, so that
 * `start --continue`, `start --resume ID` and `/resume` can pick one up. Each line is one record
 * with its time: the session's start (provider and model names, never settings or keys), each
 * message of the conversation, and the token usage of each run.
 *
 * Files are opened through `openHostFile` and read through `readHostFile` (paths.ts): a workspace
 * is not the host's, and a `.rousseau` or a session file planted as a symlink (or a FIFO) must not
 * redirect the writes, nor hand the model another file as a conversation. They are the user's alone
 * (mode 0600). A file cut short (the host was
 * killed mid-write) or damaged loads up to its last whole, valid line, with a warning saying
 * where it stopped, and is rewritten with just those lines when the session carries on (appending
 * after a cut line would damage the next record too). A call whose results were not saved is
 * dropped, so the conversation stays valid for the model.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, readdirSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { blockText } from '../../block-text.ts';
import type { Message, Usage } from '../../agent/messages.ts';
import type { ContentBlock } from '../../contract.ts';
import { openHostFile, readHostFile } from '../../paths.ts';
import { jsonTextTooLong } from '../../json-text.ts';

export type SessionRecord =
  | { type: 'session'; id: string; provider: string; model: string }
  | { type: 'model'; provider: string; model: string }
  | { type: 'message'; message: Message }
  | { type: 'usage'; usage: Usage; costUsd?: number };

export interface SessionSummary {
  id: string;
  updated: Date;
  messages: number;
  /** The first thing the user said. */
  title: string;
}

/** One run's tokens, and what they cost when the model's price was known. */
export interface RunUsage {
  usage: Usage;
  costUsd?: number;
}

export interface LoadedSession {
  id: string;
  messages: Message[];
  /** Each run's usage, and its cost when the price was known. */
  usage: RunUsage[];
  /** Set when the file was cut or damaged: what was loaded and what was not. */
  warning?: string;
  /** With a warning: the file's readable lines, what it is rewritten to when the session goes on. */
  readable?: string;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export class SessionStore {
  readonly dir: string;
  private readonly workspace: string;

  constructor(workspace: string) {
    this.workspace = workspace;
    this.dir = join(workspace, '.rousseau', 'sessions');
  }

  /** Saved sessions, the most recently updated first. */
  list(): SessionSummary[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith('.jsonl'));
    } catch {
      return []; // no session saved yet
    }
    return names
      .flatMap((name) => {
        const id = name.slice(0, -'.jsonl'.length);
        const file = join(this.dir, name);
        let text: string;
        try {
          text = readHostFile(file, this.workspace);
        } catch {
          return []; // not a session the host wrote (a symlink, a FIFO): `load` says why when asked for it
        }
        const { messages } = parse(text);
        const first = messages.find((m) => m.role === 'user');
        return [
          {
            id,
            updated: statSync(file).mtime,
            messages: messages.length,
            title: first?.role === 'user' ? first.content : '',
          },
        ];
      })
      .sort((a, b) => b.updated.getTime() - a.updated.getTime());
  }

  /** The session to continue: the one updated last. */
  latest(): string | undefined {
    return this.list()[0]?.id;
  }

  load(id: string): LoadedSession {
    const file = this.file(id);
    let text: string;
    try {
      text = readHostFile(file, this.workspace);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        throw new Error(`no saved session "${id}" in ${this.dir} (start --resume lists them)`);
      throw error;
    }
    const { messages, usage, warning, readable } = parse(text);
    return { id, messages, usage, ...(warning ? { warning: `session ${id}: ${warning}`, readable } : {}) };
  }

  /** A new session, or more of a loaded one; its file is made (or repaired) when the first record is written. */
  open(loaded?: LoadedSession): Session {
    const id = loaded?.id ?? newId();
    return new Session(id, this.file(id), this.workspace, loaded?.readable);
  }

  private file(id: string): string {
    if (!ID.test(id)) throw new Error(`"${id}" is not a session id (letters, digits, _ . -)`);
    return join(this.dir, `${id}.jsonl`);
  }
}

/** One conversation's file, appended to. */
export class Session {
  readonly id: string;
  readonly file: string;
  private readonly workspace: string;
  private repair: string | undefined;
  private fd: number | undefined;
  constructor(id: string, file: string, workspace: string, repair?: string) {
    this.id = id;
    this.file = file;
    this.workspace = workspace;
    this.repair = repair;
  }

  /** Appends one record; throws when the file cannot be opened (a symlink in the workspace, say). */
  write(record: SessionRecord): void {
    if (this.fd === undefined) {
      // Owner only: a conversation holds what the tools read (files, command output, maybe secrets).
      this.fd = openHostFile(this.file, this.workspace, this.repair === undefined ? 'append' : 'replace', 0o600);
      if (this.repair) writeSync(this.fd, this.repair);
      this.repair = undefined;
    }
    const saved = record.type === 'message' ? { ...record, message: withoutLargeBinaries(record.message) } : record;
    writeSync(this.fd, `${JSON.stringify({ ts: new Date().toISOString(), ...saved })}\n`);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/**
 * A binary block (image, audio, a resource's blob) over this many base64 characters is saved as a
 * text block naming it: a session file is read whole on resume, and a few screenshots would make
 * it megabytes. Smaller ones are kept, so a resumed conversation still shows them to the model.
 */
export const SESSION_BINARY_CHARS = 64 * 1024;

/** `message`, with each binary block over `SESSION_BINARY_CHARS` replaced by the text naming it. */
function withoutLargeBinaries(message: Message): Message {
  if (message.role !== 'tool' || !message.results.some((r) => r.blocks)) return message;
  const tooLarge = (b: ContentBlock) =>
    ((b.type === 'image' || b.type === 'audio') && b.data.length > SESSION_BINARY_CHARS) ||
    (b.type === 'resource' && (b.resource.blob?.length ?? 0) > SESSION_BINARY_CHARS);
  return {
    role: 'tool',
    results: message.results.map((r) =>
      r.blocks?.some(tooLarge)
        ? {
            ...r,
            blocks: r.blocks.map((b) =>
              tooLarge(b) ? { type: 'text' as const, text: `${blockText(b)} (not kept in the session file)` } : b,
            ),
          }
        : r,
    ),
  };
}

function newId(): string {
  return `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(2).toString('hex')}`;
}

/** The records of a session file up to its first unreadable line. */
function parse(text: string): { messages: Message[]; usage: RunUsage[]; warning?: string; readable: string } {
  const messages: Message[] = [];
  const usage: RunUsage[] = [];
  const lines = text.split('\n');
  const cut = lines.pop() !== ''; // a whole file ends with a newline
  let warning: string | undefined;
  let read = 0;
  for (const line of lines) {
    const tooLong = jsonTextTooLong(line.length);
    if (tooLong) {
      warning = `line ${read + 1} holds ${tooLong}; loaded the ${read} line(s) before it`;
      break;
    }
    const record = readRecord(line);
    if (!record) {
      warning = `line ${read + 1} is damaged; loaded the ${read} line(s) before it`;
      break;
    }
    read++;
    if (record.type === 'message') messages.push(record.message);
    else if (record.type === 'usage')
      usage.push({ usage: record.usage, ...(record.costUsd === undefined ? {} : { costUsd: record.costUsd }) });
  }
  if (!warning && cut) warning = `the file ends in a cut line; loaded the ${read} whole line(s) before it`;
  const readable = lines
    .slice(0, read)
    .map((line) => `${line}\n`)
    .join('');
  return { messages: answeredCalls(messages), usage, readable, ...(warning ? { warning } : {}) };
}

/** The conversation without a turn's calls whose results are missing: a model refuses those. */
function answeredCalls(messages: Message[]): Message[] {
  return messages.filter((m, i) => {
    if (m.role === 'assistant') return !m.toolCalls.length || messages[i + 1]?.role === 'tool';
    if (m.role === 'tool') return messages[i - 1]?.role === 'assistant';
    return true;
  });
}

function readRecord(line: string): SessionRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== 'object') return undefined;
  const record = value as { type?: unknown; message?: unknown; usage?: unknown; costUsd?: unknown };
  switch (record.type) {
    case 'session':
    case 'model':
      return record as SessionRecord;
    case 'message':
      return isMessage(record.message) ? (record as SessionRecord) : undefined;
    case 'usage':
      return isUsage(record.usage) && (record.costUsd === undefined || typeof record.costUsd === 'number')
        ? (record as SessionRecord)
        : undefined;
    default:
      return undefined;
  }
}

/**
 * A message of the shape the agent and the providers rely on, field by field: a session file is
 * the workspace's, and a wrong type (a number for a text) would otherwise throw far from here, in
 * the session list or in a provider's request.
 */
function isMessage(value: unknown): value is Message {
  const m = value as Record<string, unknown> | null;
  switch (m?.role) {
    case 'user':
      return typeof m.content === 'string';
    case 'assistant':
      return (
        typeof m.text === 'string' &&
        Array.isArray(m.toolCalls) &&
        m.toolCalls.every((c: Record<string, unknown> | null) => strings(c, 'id', 'name', 'arguments'))
      );
    case 'tool':
      return (
        Array.isArray(m.results) &&
        m.results.every(
          (r: Record<string, unknown> | null) =>
            strings(r, 'callId', 'name', 'content') &&
            typeof r?.isError === 'boolean' &&
            (r.blocks === undefined || (Array.isArray(r.blocks) && r.blocks.every(isBlock))),
        )
      );
    default:
      return false;
  }
}

/** A content block of a shape the providers read (sessions saved before blocks existed have none). */
function isBlock(value: unknown): boolean {
  const b = value as Record<string, unknown> | null;
  switch (b?.type) {
    case 'text':
      return strings(b, 'text');
    case 'image':
    case 'audio':
      return strings(b, 'data', 'mimeType');
    case 'resource_link':
      return strings(b, 'uri', 'name');
    case 'resource': {
      const r = b.resource as Record<string, unknown> | null;
      return (
        strings(r, 'uri') &&
        ['mimeType', 'text', 'blob'].every((key) => r?.[key] === undefined || typeof r[key] === 'string')
      );
    }
    default:
      return false;
  }
}

function strings(object: Record<string, unknown> | null, ...keys: string[]): boolean {
  return keys.every((key) => typeof object?.[key] === 'string');
}

function isUsage(value: unknown): value is Usage {
  const u = value as Record<string, unknown> | null;
  return (
    typeof u?.inputTokens === 'number' &&
    typeof u.outputTokens === 'number' &&
    ['cacheReadTokens', 'cacheWriteTokens'].every((key) => u[key] === undefined || typeof u[key] === 'number')
  );
}
