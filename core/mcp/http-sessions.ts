/**
 * The sessions of the Streamable HTTP front end (serve.ts): each a protocol server and its
 * transport, owned by the caller that opened it. A session with no request open is idle; an idle
 * session ends after `idleMs`, and the one idle longest makes room when all `max` places are taken.
 */
import type { ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Logger } from '../log.ts';
import { sessionTag } from './server.ts';

export interface Session {
  /** The caller that opened it (`via:name`), when the server authenticates: no one else may use it. */
  owner: string | undefined;
  server: Server;
  transport: StreamableHTTPServerTransport;
  /** Requests (POST responses, GET streams) still open: a session serving one is not idle. */
  open: number;
  lastSeen: number;
}

export class HttpSessions {
  readonly idleMs: number;
  readonly max: number;
  private readonly log: Logger;
  private readonly sessions = new Map<string, Session>();
  /** Initialize requests not yet answered: each holds a place among `max`. */
  private initializing = 0;
  private readonly sweep: NodeJS.Timeout;

  constructor(log: Logger, idleMs: number, max: number) {
    this.log = log;
    this.idleMs = idleMs;
    this.max = max;
    this.sweep = setInterval(
      () => {
        const now = Date.now();
        for (const [id, session] of this.sessions)
          if (session.open === 0 && now - session.lastSeen >= idleMs) this.end(id, `idle for ${idleMs} ms`);
      },
      Math.max(10, Math.min(idleMs / 4, 60_000)),
    );
    this.sweep.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** The session `id`, if `owner` opened it: another caller's session is unknown to them, an id alone takes none over. */
  find(id: string, owner: string | undefined): Session | undefined {
    const session = this.sessions.get(id);
    return session && session.owner === owner ? session : undefined;
  }

  /** Counts `res` as open on `session` until it closes. */
  serving(session: Session, res: ServerResponse): void {
    session.open++;
    session.lastSeen = Date.now();
    res.on('close', () => {
      session.open--;
      session.lastSeen = Date.now();
    });
  }

  /**
   * A place for a session being initialized, or undefined when every place is busy (idle sessions
   * give theirs up). Initializes in flight hold one: checked one by one, clients that initialize at
   * the same moment would each see room for themselves. Returns its release, which may be called
   * more than once.
   */
  reserve(): (() => void) | undefined {
    if (this.sessions.size + this.initializing - this.idle() >= this.max) return undefined;
    this.initializing++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.initializing--;
    };
  }

  /** Keeps an initialized session, ending the one idle longest when every place is taken. */
  add(id: string, session: Session): void {
    if (this.sessions.size >= this.max) {
      const idle = this.oldestIdle();
      if (idle) this.end(idle, 'the most sessions were open and it was idle longest');
    }
    this.sessions.set(id, session);
  }

  end(id: string, why: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    // The id is the session's credential: logs name it by its tag, as the audit does.
    this.log.debug(`MCP HTTP session ${sessionTag(id)} closed: ${why}`);
    // Closing the server aborts the calls still running for it.
    void session.transport.close();
    void session.server.close();
  }

  /** No idle session ends by itself from now on. */
  stopSweep(): void {
    clearInterval(this.sweep);
  }

  endAll(why: string): void {
    for (const id of [...this.sessions.keys()]) this.end(id, why);
  }

  private idle(): number {
    let idle = 0;
    for (const session of this.sessions.values()) if (session.open === 0) idle++;
    return idle;
  }

  /** The session idle longest (no request open), if any. */
  private oldestIdle(): string | undefined {
    let found: [string, Session] | undefined;
    for (const entry of this.sessions)
      if (entry[1].open === 0 && (!found || entry[1].lastSeen < found[1].lastSeen)) found = entry;
    return found?.[0];
  }
}
