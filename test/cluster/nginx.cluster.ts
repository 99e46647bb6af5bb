// Three real hosts behind a real nginx (`npm run test:cluster`, not part of `npm test`): sessions
// routed back to their host by the host id their id begins with, one host killed (SIGKILL) in the
// middle of 2,000 calls, clients that lose their session initialize anew, and the three audit files
// together hold every call answered ok exactly once. Prints calls/s for one host and for three.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'chai';
import { setMaxListeners } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, type HttpHost, spawnHttpHost, tempDir } from '../helpers.ts';
import { freePort, NGINX, type Nginx, nginxConfig, startNginx } from './nginx.ts';

const IDS = ['h1', 'h2', 'h3'];
/** The host killed mid-run; its sessions' clients must find another. */
const VICTIM = 'h2';
const CLIENTS = 8;
/** Calls each client keeps in flight at once. */
const LANES = 4;
const CALLS = 2000;
/** Calls through nginx to one host, for its calls/s beside the three's. */
const SINGLE_CALLS = 500;

/** How a call ended, as its client saw it, and on which host's session. */
interface Answer {
  key: string;
  host: string;
  ok: boolean;
  error?: string;
  at: number;
}

/** The host a session id belongs to: what comes before its last dot (the rest is a UUID). */
const hostOf = (sessionId: string | undefined) => sessionId?.slice(0, sessionId.lastIndexOf('.')) ?? '(none)';

/** One session through nginx. `gone` aborts the calls still waiting on it once its host is known to be gone. */
interface Session {
  client: Client;
  host: string;
  gone: AbortController;
}

/**
 * An MCP client that keeps a session through nginx, and opens a new one when the host behind it
 * goes away: what docs/serve.md asks of a client behind a load balancer. A host is known to be
 * gone when nginx answers the session's id with 404 (a request, or the SDK reconnecting a broken
 * stream). A broken stream alone is only a hint: a ping on the session settles it.
 */
class Link {
  private current: Promise<Session>;
  sessions = 0;
  private readonly url: URL;

  constructor(url: string) {
    this.url = new URL(url);
    this.current = this.open();
  }

  session(): Promise<Session> {
    return this.current;
  }

  private async open(): Promise<Session> {
    this.sessions++;
    const client = new Client({ name: 'cluster-test', version: '1.0.0' });
    const session: Session = { client, host: '(initializing)', gone: new AbortController() };
    setMaxListeners(0, session.gone.signal); // one listener per call in flight on the session
    client.onerror = (error) => {
      if (error instanceof StreamableHTTPError && error.code === 404) this.lost(session, error);
      else if (error.message.startsWith('SSE stream disconnected')) void client.ping().catch(() => {});
    };
    const transport = new StreamableHTTPClientTransport(this.url);
    await client.connect(transport);
    session.host = hostOf(transport.sessionId);
    return session;
  }

  /** The host behind `session` is gone: its calls in flight fail saying so, and the next call gets a new session. */
  lost(session: Session, why: Error): void {
    if (session.gone.signal.aborted) return;
    session.gone.abort(new Error(`the host behind this session (${session.host}) went away: ${why.message}`));
    void session.client.close();
    void this.current.then((s) => {
      if (s === session) this.current = this.open();
    });
  }

  async close(): Promise<void> {
    await (await this.current).client.close();
  }
}

/** `calls` echo calls from `CLIENTS` clients with `LANES` each in flight; `onAnswer` sees each as it ends. */
async function run(
  url: string,
  prefix: string,
  calls: number,
  onAnswer: (answer: Answer, answered: number) => void = () => {},
): Promise<{ answers: Answer[]; seconds: number; sessions: number }> {
  const answers: Answer[] = [];
  const links = Array.from({ length: CLIENTS }, () => new Link(url));
  let next = 0;
  const started = performance.now();
  const lane = async (link: Link) => {
    for (let n = next++; n < calls; n = next++) {
      const key = `${prefix}-${n}`;
      const session = await link.session();
      let answer: Answer;
      try {
        const result = (await session.client.callTool({ name: 'echo', arguments: { text: key } }, undefined, {
          signal: session.gone.signal,
          timeout: 30_000,
        })) as CallToolResult;
        const text = (result.content[0] as { text?: string } | undefined)?.text;
        answer =
          result.isError || text !== key
            ? {
                key,
                host: session.host,
                ok: false,
                error: `unexpected result: ${JSON.stringify(result)}`,
                at: Date.now(),
              }
            : { key, host: session.host, ok: true, at: Date.now() };
      } catch (error) {
        if (error instanceof StreamableHTTPError && error.code === 404) link.lost(session, error);
        answer = { key, host: session.host, ok: false, error: (error as Error).message, at: Date.now() };
      }
      answers.push(answer);
      onAnswer(answer, answers.length);
    }
  };
  await Promise.all(links.flatMap((link) => Array.from({ length: LANES }, () => lane(link))));
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(links.map((link) => link.close()));
  return { answers, seconds, sessions: links.reduce((sum, link) => sum + link.sessions, 0) };
}

interface AuditLine {
  time: string;
  host?: string;
  event: string;
  callId: string;
  input?: string;
  outcome?: string;
}

/** A host's audit: its lines, and the key (the echoed text) of each call line that ended ok. */
function readAudit(file: string): { raw: string; lines: AuditLine[]; okKeys: string[] } {
  const raw = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const lines = raw
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditLine);
  const inputs = new Map(
    lines.filter((l) => l.event === 'decision').map((l) => [l.callId, (JSON.parse(l.input!) as { text: string }).text]),
  );
  const okKeys = lines.filter((l) => l.event === 'call' && l.outcome === 'ok').map((l) => inputs.get(l.callId)!);
  return { raw, lines, okKeys };
}

describe('three hosts behind nginx, one killed mid-run', function () {
  this.timeout(120_000);
  const tmp = tempDir('rh-cluster-');
  const hosts = new Map<string, HttpHost>();
  const audit = (id: string) => join(tmp.dir, id, 'audit.jsonl');
  let nginx: Nginx | undefined;
  let cluster: string;
  let single: string;

  before(async () => {
    if (!existsSync(NGINX))
      throw new Error(`${NGINX} is missing: install nginx (apt-get install nginx-light), as .ci/run does`);
    for (const id of IDS) {
      tmp.write(
        join(id, 'rousseau.config.json'),
        JSON.stringify({
          builtins: false,
          plugins: [{ module: join(FIXTURES, 'plugins', 'echo.ts'), isolation: 'inline' }],
          policy: { default: 'allow' },
          log: { audit: 'audit.jsonl' },
        }),
      );
    }
    const started = await Promise.all(IDS.map((id) => spawnHttpHost(['--host-id', id, '--cwd', join(tmp.dir, id)])));
    for (const [i, id] of IDS.entries()) hosts.set(id, started[i]!);
    const [listen, listenSingle] = [await freePort(), await freePort()];
    const upstreams = IDS.map((id) => ({ id, port: hosts.get(id)!.port }));
    nginx = await startNginx(tmp.dir, nginxConfig({ dir: tmp.dir, listen, listenSingle, hosts: upstreams }), listen);
    cluster = `http://127.0.0.1:${listen}/mcp`;
    single = `http://127.0.0.1:${listenSingle}/mcp`;
  });

  after(async () => {
    await nginx?.stop();
    await Promise.all([...hosts.values()].map((h) => h.stop('SIGKILL')));
    tmp.cleanup();
  });

  it('answers every call, routes each session to its host, and the audits hold every ok call exactly once', async () => {
    const one = await run(single, 'one', SINGLE_CALLS);
    expect(one.answers.filter((a) => !a.ok)).to.deep.equal([]);
    expect(new Set(one.answers.map((a) => a.host))).to.deep.equal(new Set(['h1']));

    let killedAt = 0;
    const three = await run(cluster, 'three', CALLS, (_answer, answered) => {
      if (answered === CALLS / 2) {
        killedAt = Date.now();
        hosts.get(VICTIM)!.child.kill('SIGKILL');
      }
    });
    console.error(
      `      calls/s through nginx: 1 host ${(SINGLE_CALLS / one.seconds).toFixed(0)}, ` +
        `3 hosts ${(CALLS / three.seconds).toFixed(0)} (${CLIENTS} clients × ${LANES} in flight; ` +
        `${three.answers.filter((a) => !a.ok).length} calls lost with ${VICTIM}, ${three.sessions - CLIENTS} sessions reopened)`,
    );

    // Every call answered: ok, or lost with the killed host, saying so.
    expect(three.answers).to.have.length(CALLS);
    const failed = three.answers.filter((a) => !a.ok);
    for (const a of failed) {
      expect(a.host, `${a.key}: ${a.error}`).to.equal(VICTIM);
      expect(a.error, a.key).to.match(/went away/);
      expect(a.at, a.key).to.be.at.least(killedAt);
    }
    // Sessions spread over the three, and the killed host's clients went on on the others.
    const served = (host: string, after = 0) => three.answers.filter((a) => a.ok && a.host === host && a.at > after);
    for (const id of IDS) expect(served(id), id).to.not.be.empty;
    expect(three.sessions).to.be.above(CLIENTS);
    expect(served('h1', killedAt).length + served('h3', killedAt).length).to.be.above(CALLS / 4);

    // The live hosts drain, flush their audits and exit 0 on SIGTERM, as serve does; the killed one wrote what it had.
    for (const id of IDS.filter((id) => id !== VICTIM))
      expect(await hosts.get(id)!.stop()).to.deep.equal({ code: 0, signal: null });
    const audits = new Map(IDS.map((id) => [id, readAudit(audit(id))]));
    for (const [id, { raw, lines }] of audits) {
      // Whole lines only, the killed host's too: each batch is one write, and SIGKILL lands between writes.
      expect(raw.endsWith('\n'), `${id}'s audit ends in a whole line`).to.equal(true);
      expect(
        lines.every((l) => l.host === id),
        `every line of ${id}'s audit names ${id}`,
      ).to.equal(true);
    }
    const okAudited = new Map<string, string[]>();
    for (const [id, { okKeys }] of audits)
      for (const key of okKeys) okAudited.set(key, [...(okAudited.get(key) ?? []), id]);
    // Each call answered ok is in the audit of the host that ran it, once, and in no other.
    for (const a of [...one.answers, ...three.answers].filter((x) => x.ok))
      expect(okAudited.get(a.key), a.key).to.deep.equal([a.host]);
    // And nothing else is: a call lost with the killed host was audited there at most, never on a live one.
    const lost = new Set(failed.map((a) => a.key));
    const answeredOk = new Set([...one.answers, ...three.answers].filter((a) => a.ok).map((a) => a.key));
    for (const [key, where] of okAudited) {
      if (answeredOk.has(key)) continue;
      expect(lost.has(key), `${key} audited ok on ${where.join(', ')} but never answered`).to.equal(true);
      expect(where, key).to.deep.equal([VICTIM]);
    }
  });
});
