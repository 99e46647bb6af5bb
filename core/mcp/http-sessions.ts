/**
 * The sessions of the Streamable HTTP front end (serve.ts): each a protocol server and its
 * transport, owned by the caller that opened it. A session with no request open is idle; an idle
 * session ends after `idleMs`, and the one idle longest makes room when all `max` places are taken.
 * One caller holds at most `maxPerCaller` of them: a caller who opens more closes their own idle
 * ones, never another caller's.
 */
import type { ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Logger } from '../log.ts';
import type { BoundedEventStore } from './event-store.ts';
import { sessionTag } from './request-identity.ts';

export interface Session {
  /** The caller that opened it (`via:name`), when the server authenticates: no one else may use it. */
  owner: string | undefined;
  server: Server;
  transport: StreamableHTTPServerTransport;
  /** What the session sent, for a client that resumes: forgotten when it ends. */
  events: BoundedEventStore;
  /** Requests (POST responses, GET streams) still open: a session serving one is not idle. */
  open: number;
  lastSeen: number;
}

export interface HttpSessionLimits {
  idleMs: number;
  max: number;
  /** Sessions one authenticated caller may hold. */
  maxPerCaller: number;
}

/** A place for a session being initialized, or why there is none. */
export type Place = { ok: true; release: () => void } | { ok: false; refusal: string };

export class HttpSessions {
  readonly idleMs: number;
  readonly max: number;
  readonly maxPerCaller: number;
  private readonly log: Logger;
  private readonly sessions = new Map<string, Session>();
  /** Initialize requests not yet answered, by their caller: each holds a place among `max`, and its caller's. */
  private readonly initializing = new Set<{ owner: string | undefined }>();
  private readonly sweep: NodeJS.Timeout;

  constructor(log: Logger, { idleMs, max, maxPerCaller }: HttpSessionLimits) {
    this.log = log;
    this.idleMs = idleMs;
    this.max = max;
    this.maxPerCaller = maxPerCaller;
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
   * A place for a session `owner` is initializing, unless every place is busy (idle sessions give
   * theirs up), or every one of the caller's own. Initializes in flight hold one: checked one by
   * one, clients that initialize at the same moment would each see room for themselves. Its
   * release may be called more than once.
   */
  reserve(owner: string | undefined): Place {
    if (this.sessions.size + this.initializing.size - this.idle() >= this.max)
      return { ok: false, refusal: `Too many sessions: all ${this.max} are busy; try again later` };
    if (owner !== undefined && this.busyOf(owner) >= this.maxPerCaller)
      return {
        ok: false,
        refusal: `Too many sessions: all ${this.maxPerCaller} sessions one caller may hold are busy; end one (DELETE) or try again later`,
      };
    const place = { owner };
    this.initializing.add(place);
    return { ok: true, release: () => this.initializing.delete(place) };
  }

  /**
   * Keeps an initialized session (its place released), ending first the caller's own session idle
   * longest when they hold all theirs, then the one idle longest when every place is taken.
   */
  add(id: string, session: Session): void {
    const { owner } = session;
    if (owner !== undefined && this.heldBy(owner) >= this.maxPerCaller) {
      const idle = this.oldestIdle(owner);
      if (idle) this.end(idle, 'its caller opened more sessions than one caller may hold, and it was idle longest');
    }
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
    // No client resumes an ended session: its events give their share of the server's budget back.
    session.events.end();
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

  /** The caller's sessions, those still initializing included. */
  private heldBy(owner: string): number {
    let count = 0;
    for (const session of this.sessions.values()) if (session.owner === owner) count++;
    for (const place of this.initializing) if (place.owner === owner) count++;
    return count;
  }

  /** The caller's sessions serving a request, those still initializing included: those a new one cannot close. */
  private busyOf(owner: string): number {
    let count = 0;
    for (const session of this.sessions.values()) if (session.owner === owner && session.open > 0) count++;
    for (const place of this.initializing) if (place.owner === owner) count++;
    return count;
  }

  /** The session idle longest (no request open), of `owner` when given, if any. */
  private oldestIdle(owner?: string): string | undefined {
    let found: [string, Session] | undefined;
    for (const entry of this.sessions)
      if (
        entry[1].open === 0 &&
        (owner === undefined || entry[1].owner === owner) &&
        (!found || entry[1].lastSeen < found[1].lastSeen)
      )
        found = entry;
    return found?.[0];
  }
}
