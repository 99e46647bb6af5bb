// The team server's authentication (core/mcp/auth.ts through serveMcpHttp): bearer tokens, and JWTs
// checked against a real issuer on loopback whose key set rotates. Clients are the SDK's own, or
// fetch where the test reads a status and a header.
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { HostError } from '../../core/errors.ts';
import type { Host } from '../../core/host.ts';
import { createServeAuth, type ServeAuth } from '../../core/mcp/auth.ts';
import { type McpHttpServer, serveMcpHttp } from '../../core/mcp/serve.ts';
import { tempDir, until } from '../helpers.ts';
import { allowingHost, text } from './shared.ts';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-fedcba9876543210';
const AUDIENCE = 'https://tools.example/mcp';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
};

/** POSTs an initialize with these headers. */
const post = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(INIT),
  });

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'auth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: bearer(token) } }));
  return client;
}

interface AuditLine {
  event: string;
  tool: string;
  code?: string;
  caller?: string;
}
/** The whole lines of the audit file: a batch may be half written when the test reads it. */
const auditLines = (file: string): AuditLine[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .slice(0, -1)
        .map((l) => JSON.parse(l) as AuditLine)
    : [];

/** The audit lines of `caller`'s calls of echo, once both lines of one are written (the sink writes in batches). */
const auditedFor = (file: string, caller: string) =>
  until(
    () => {
      const mine = auditLines(file).filter((l) => l.tool === 'echo' && l.caller === caller);
      return mine.some((l) => l.event === 'call') && mine.some((l) => l.event === 'decision') ? mine : undefined;
    },
    { message: () => `the audit lines of ${caller}'s call` },
  );

/**
 * An OAuth authorization server on loopback, as far as a resource server sees one: its metadata
 * (RFC 8414) and its key set, which `rotate()` replaces with a new key.
 */
async function issuerServer() {
  type Key = { kid: string; privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey']; jwk: JWK };
  const newKey = async (kid: string): Promise<Key> => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
  };
  let keys: Key[] = [await newKey('k1')];
  let jwksFetches = 0;
  const http: Server = createServer((req, res) => {
    const json = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/.well-known/oauth-authorization-server') return json({ issuer, jwks_uri: `${issuer}/jwks` });
    if (req.url === '/jwks') {
      jwksFetches++;
      return json({ keys: keys.map((k) => k.jwk) });
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    issuer,
    jwksFetches: () => jwksFetches,
    /** The key set now holds a new key only; returns its kid. */
    async rotate(kid: string) {
      keys = [await newKey(kid)];
    },
    /** Keeps the current private keys, so a test can sign with one after it is gone from the set. */
    keys: () => [...keys],
    /** A token signed with `key` (the current one by default), with these claims over sane defaults. */
    sign(claims: Record<string, unknown> = {}, opts: { key?: Key; expiresIn?: string | number } = {}) {
      const key = opts.key ?? keys[0]!;
      return new SignJWT({ scope: 'tools:call', ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: key.kid })
        .setIssuer((claims.iss as string | undefined) ?? issuer)
        .setAudience((claims.aud as string | undefined) ?? AUDIENCE)
        .setSubject((claims.sub as string | undefined) ?? 'carol@example.com')
        .setIssuedAt()
        .setExpirationTime(opts.expiresIn ?? '5m')
        .sign(key.privateKey);
    },
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  };
}

describe('serveMcpHttp with authentication', function () {
  this.timeout(20_000);
  const tmp = tempDir('rh-mcp-auth-');
  const audit = join(tmp.dir, 'audit.jsonl');
  let host: Host;
  let issuer: Awaited<ReturnType<typeof issuerServer>>;
  let auth: ServeAuth;
  let server: McpHttpServer;

  before(async () => {
    host = await allowingHost([{ module: '../plugins/echo.ts', isolation: 'inline' }], audit);
    issuer = await issuerServer();
    auth = (await createServeAuth(
      {
        tokens: [
          { name: 'alice', token: ALICE, scopes: ['tools:call'] },
          { name: 'bob', tokenEnv: 'RH_TEST_BOB', scopes: ['tools:call'] },
        ],
        // No jwksUri: the key set is found through the issuer's metadata.
        oauth: { issuer: issuer.issuer, audience: AUDIENCE },
      },
      // No cooldown between key set fetches: the rotation test need not wait jose's 30 s out.
      { env: { RH_TEST_BOB: BOB }, jwksCooldownMs: 0 },
    ))!;
    server = await serveMcpHttp(host, {
      port: 0,
      authenticate: auth.authenticate,
      ...(auth.protectedResource ? { protectedResource: auth.protectedResource } : {}),
    });
  });
  after(async () => {
    await server.close();
    await host.close();
    await issuer.close();
    tmp.cleanup();
  });

  const metadataUrl = () => `${new URL(server.url).origin}/.well-known/oauth-protected-resource/mcp`;

  it('answers a request without a token 401, pointing at its protected resource metadata', async () => {
    const res = await post(server.url);
    expect(res.status).to.equal(401);
    // No token, no error code (RFC 6750 §3.1): only where to learn how to get one.
    expect(res.headers.get('www-authenticate')).to.equal(`Bearer resource_metadata="${metadataUrl()}"`);
    const sdk = new Client({ name: 'auth-test', version: '1.0.0' });
    let refused: unknown;
    await sdk.connect(new StreamableHTTPClientTransport(new URL(server.url))).catch((e: unknown) => (refused = e));
    expect(String(refused)).to.match(/401|Unauthorized/);
  });

  it('answers a wrong token 401 invalid_token, and a header that is no bearer token too', async () => {
    const wrong = await post(server.url, bearer('not-a-token-anyone-issued'));
    expect(wrong.status).to.equal(401);
    const header = wrong.headers.get('www-authenticate')!;
    expect(header).to.match(/^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="/);
    expect(header).to.not.include('not-a-token-anyone-issued');
    expect((await post(server.url, { authorization: `Basic ${btoa('alice:x')}` })).status).to.equal(401);
  });

  it("serves a good token's caller, and writes the caller (never the token) on both audit lines of its call", async () => {
    const client = await connect(server.url, ALICE);
    try {
      expect(text(await client.callTool({ name: 'echo', arguments: { text: 'from alice' } }))).to.equal('from alice');
    } finally {
      await client.close();
    }
    const mine = await auditedFor(audit, 'alice');
    expect(JSON.stringify(mine.find((l) => l.event === 'decision'))).to.include('from alice');
    expect(readFileSync(audit, 'utf8')).to.not.include(ALICE);
  });

  it('reads a token from the environment (tokenEnv)', async () => {
    const client = await connect(server.url, BOB);
    try {
      expect(text(await client.callTool({ name: 'echo', arguments: { text: 'from bob' } }))).to.equal('from bob');
    } finally {
      await client.close();
    }
    await auditedFor(audit, 'bob');
  });

  it("will not let another caller use a session by its id: bob gets 404 on alice's session", async () => {
    const client = await connect(server.url, ALICE);
    try {
      const id = (client.transport as StreamableHTTPClientTransport).sessionId!;
      const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
      const as = (token: string) =>
        fetch(server.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': id,
            'mcp-protocol-version': '2025-06-18',
            ...bearer(token),
          },
          body: JSON.stringify(list),
        });
      expect((await as(BOB)).status).to.equal(404);
      expect((await as(ALICE)).status).to.equal(200);
      // The session is still alice's and still works.
      expect((await client.listTools()).tools.map((t) => t.name)).to.include('echo');
    } finally {
      await client.close();
    }
  });

  it('serves a good JWT: the caller is its subject, and the audit names it', async () => {
    const client = await connect(server.url, await issuer.sign({ sub: 'carol@example.com', scope: 'tools:call read' }));
    try {
      expect(text(await client.callTool({ name: 'echo', arguments: { text: 'from carol' } }))).to.equal('from carol');
    } finally {
      await client.close();
    }
    await auditedFor(audit, 'carol@example.com');
  });

  it("refuses a JWT whose subject or client_id is a bearer token's name: it would get that caller's rules, limits and audit name", async () => {
    const cases: [string, string][] = [
      ['sub', await issuer.sign({ sub: 'alice' })],
      // No subject: the caller would be its client_id.
      ['client_id', await issuer.sign({ sub: '', client_id: 'bob' })],
    ];
    for (const [what, token] of cases) {
      const res = await post(server.url, bearer(token));
      expect(res.status, what).to.equal(401);
      const header = res.headers.get('www-authenticate')!;
      expect(header, what).to.include('error="invalid_token"');
      expect(header, what).to.match(/name of a bearer token/);
    }
  });

  it('refuses an expired JWT, one for another audience and one from another issuer, each 401 invalid_token saying why', async () => {
    const cases: [string, string, RegExp][] = [
      ['expired', await issuer.sign({}, { expiresIn: Math.floor(Date.now() / 1000) - 120 }), /expired/],
      ['audience', await issuer.sign({ aud: 'https://other.example/mcp' }), /another audience/],
      ['issuer', await issuer.sign({ iss: 'https://evil.example' }), /another issuer/],
    ];
    for (const [what, token, why] of cases) {
      const res = await post(server.url, bearer(token));
      expect(res.status, what).to.equal(401);
      const header = res.headers.get('www-authenticate')!;
      expect(header, what).to.include('error="invalid_token"');
      expect(header, what).to.match(why);
      expect(header, what).to.include(`resource_metadata="${metadataUrl()}"`);
    }
  });

  it('follows a key rotation: a token of the new key is served once the set has it, one of the removed key is refused', async () => {
    const old = issuer.keys()[0]!;
    const before = await issuer.sign({ sub: 'before-rotation' });
    expect((await post(server.url, bearer(before))).status).to.equal(200);
    await issuer.rotate('k2');
    const fetched = issuer.jwksFetches();
    // jose does not know k2: it fetches the set again, finds it, and serves the token.
    const after = await issuer.sign({ sub: 'after-rotation' });
    expect((await post(server.url, bearer(after))).status).to.equal(200);
    expect(issuer.jwksFetches()).to.be.greaterThan(fetched);
    // k1 is gone from the set now: its tokens, valid a moment ago, are refused.
    const res = await post(server.url, bearer(await issuer.sign({ sub: 'old-key' }, { key: old })));
    expect(res.status).to.equal(401);
    expect(res.headers.get('www-authenticate')).to.match(/a key the issuer does not publish/);
  });

  it('serves its protected resource metadata (RFC 9728) at the well-known path and the one suffixed with /mcp', async () => {
    for (const url of [metadataUrl(), `${new URL(server.url).origin}/.well-known/oauth-protected-resource`]) {
      const res = await fetch(url);
      expect(res.status, url).to.equal(200);
      expect(await res.json(), url).to.deep.equal({
        resource: server.url,
        authorization_servers: [issuer.issuer],
        bearer_methods_supported: ['header'],
      });
    }
  });
});

describe('serveMcpHttp: required scopes', function () {
  this.timeout(20_000);
  let host: Host;
  let issuer: Awaited<ReturnType<typeof issuerServer>>;
  let server: McpHttpServer;

  before(async () => {
    host = await allowingHost([{ module: '../plugins/echo.ts', isolation: 'inline' }]);
    issuer = await issuerServer();
    const auth = (await createServeAuth({
      tokens: [{ name: 'reader', token: ALICE, scopes: ['read'] }],
      oauth: { issuer: issuer.issuer, audience: AUDIENCE, jwksUri: `${issuer.issuer}/jwks` },
      requiredScopes: ['tools:call'],
    }))!;
    server = await serveMcpHttp(host, {
      port: 0,
      authenticate: auth.authenticate,
      protectedResource: auth.protectedResource!,
      publicUrl: 'https://tools.example/mcp',
    });
  });
  after(async () => {
    await server.close();
    await host.close();
    await issuer.close();
  });

  it('serves a JWT holding the scope (space-separated scope, or an scp array) and answers one without it 403 insufficient_scope', async () => {
    expect((await post(server.url, bearer(await issuer.sign({ scope: 'read tools:call' })))).status).to.equal(200);
    expect(
      (await post(server.url, bearer(await issuer.sign({ scope: undefined, scp: ['tools:call'] })))).status,
    ).to.equal(200);
    for (const token of [ALICE, await issuer.sign({ scope: 'read' })]) {
      const res = await post(server.url, bearer(token));
      expect(res.status).to.equal(403);
      expect(res.headers.get('www-authenticate')).to.match(
        /^Bearer error="insufficient_scope", error_description="[^"]*tools:call", scope="tools:call", resource_metadata=/,
      );
    }
  });

  it('names the public URL as the resource, and the required scopes as those supported', async () => {
    const res = await post(server.url);
    // The scope a client should ask its issuer for comes with the challenge, as in the metadata.
    expect(res.headers.get('www-authenticate')).to.equal(
      'Bearer scope="tools:call", resource_metadata="https://tools.example/.well-known/oauth-protected-resource/mcp"',
    );
    const doc = await (await fetch(`${new URL(server.url).origin}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(doc).to.deep.equal({
      resource: 'https://tools.example/mcp',
      authorization_servers: [issuer.issuer],
      scopes_supported: ['tools:call'],
      bearer_methods_supported: ['header'],
    });
  });
});

describe('serve.auth that cannot be used', () => {
  const refusal = async (work: Promise<unknown>): Promise<HostError> => {
    const error = await work.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(HostError);
    return error as HostError;
  };

  it('names the token and the variable when tokenEnv is not set', async () => {
    const error = await refusal(createServeAuth({ tokens: [{ name: 'ci', tokenEnv: 'RH_TEST_UNSET' }] }, { env: {} }));
    expect(error.code).to.equal('RH_ERR_SERVE_AUTH');
    expect(error.message).to.include('token "ci"').and.include('RH_TEST_UNSET');
  });

  it('refuses two callers sharing a token, without saying the token', async () => {
    const error = await refusal(
      createServeAuth(
        {
          tokens: [
            { name: 'a', token: ALICE },
            { name: 'b', tokenEnv: 'SAME' },
          ],
        },
        { env: { SAME: ALICE } },
      ),
    );
    expect(error.message).to.include('token "b" has the same value as token "a"');
    expect(error.message).to.not.include(ALICE);
  });

  it('refuses an issuer whose key set it cannot find, naming the URLs it tried', async () => {
    const error = await refusal(
      createServeAuth({ oauth: { issuer: 'http://127.0.0.1:9/issuer', audience: AUDIENCE } }),
    );
    expect(error.code).to.equal('RH_ERR_SERVE_AUTH');
    expect(error.message).to.include('http://127.0.0.1:9/.well-known/oauth-authorization-server/issuer');
    expect(error.message).to.include('jwksUri');
  });

  it("fails a token's check with RH_ERR_SERVE_AUTH, naming the key set, when the issuer's key set cannot be read", async () => {
    const issuer = await issuerServer();
    try {
      const jwksUri = `${issuer.issuer}/no-such-key-set`;
      const auth = (await createServeAuth({ oauth: { issuer: issuer.issuer, audience: AUDIENCE, jwksUri } }))!;
      const req = { headers: { authorization: `Bearer ${await issuer.sign()}` } } as IncomingMessage;
      const error = await refusal(Promise.resolve(auth.authenticate(req)));
      expect(error.code).to.equal('RH_ERR_SERVE_AUTH');
      expect(error.message).to.include(jwksUri);
    } finally {
      await issuer.close();
    }
  });

  it('is no authentication at all when it names neither tokens nor an issuer', async () => {
    expect(await createServeAuth(undefined)).to.equal(undefined);
    expect(await createServeAuth({ tokens: [] })).to.equal(undefined);
  });

  it('refuses to listen on an address that is not loopback without authentication, saying what to add', async () => {
    const host = await allowingHost([]);
    try {
      const error = await refusal(serveMcpHttp(host, { port: 0, hostname: '0.0.0.0' }));
      expect(error.code).to.equal('RH_ERR_SERVE_NO_AUTH');
      expect(error.message).to.include('0.0.0.0').and.include('serve: { auth: { tokens:');
    } finally {
      await host.close();
    }
  });
});
