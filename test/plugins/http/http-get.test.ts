import { expect } from 'chai';
import type { LookupAddress } from 'node:dns';
import { readFileSync } from 'node:fs';
import type { LookupFunction } from 'node:net';
import { join } from 'node:path';
import type { PolicyConfig } from '../../../core/config-schema.ts';
import type { ApproveFn } from '../../../core/dispatch.ts';
import { createHost } from '../../../core/host.ts';
import type { Isolation } from '../../../core/types.ts';
import { tempDir } from '../../helpers.ts';
import { loadPluginModule } from '../load.ts';
import { textOf, toolContext } from '../tool-context.ts';
import { makeCertificate, startHttpServer, startHttpsServer, type TestServer } from './tls-server.ts';

type Answer = LookupAddress;

/** A resolver that answers from a script instead of DNS (no test ever reaches the real network). */
function scriptedLookup(answer: (host: string, call: number) => Answer[]): LookupFunction & { calls: string[] } {
  const calls: string[] = [];
  const lookup = ((host: string, options: { all?: boolean }, cb: (...a: unknown[]) => void) => {
    calls.push(host);
    const answers = answer(host, calls.length);
    setImmediate(() => (options.all ? cb(null, answers) : cb(null, answers[0]!.address, answers[0]!.family)));
  }) as unknown as LookupFunction & { calls: string[] };
  lookup.calls = calls;
  return lookup;
}

const v4 = (address: string): Answer[] => [{ address, family: 4 }];

describe('plugins/http http_get', function () {
  this.timeout(10_000);
  let createHttpGetTool: typeof import('../../../plugins/http/http-get.ts').createHttpGetTool;
  let tls: { cert: string; key: string };
  let main: TestServer; // 127.0.0.1:P, the only address tests allow
  let other: TestServer; // 127.0.0.2:P, same port: reaching it means the guard failed
  let plain: TestServer; // plain http on 127.0.0.1

  before(async () => {
    ({ createHttpGetTool } =
      await loadPluginModule<typeof import('../../../plugins/http/http-get.ts')>('plugins/http/http-get.ts'));
    tls = makeCertificate();
    main = await startHttpsServer(tls, '127.0.0.1');
    other = await startHttpsServer(tls, '127.0.0.2', main.port);
    plain = await startHttpServer('127.0.0.1');
  });
  after(async () => {
    await Promise.all([main?.close(), other?.close(), plain?.close()]);
  });
  beforeEach(() => {
    for (const s of [main, other, plain]) {
      s.connections.length = 0;
      s.requests.length = 0;
    }
  });

  const options = (extra: Record<string, unknown> = {}) => ({
    dangerouslyAllowForTests: { addresses: ['127.0.0.1'], ca: tls.cert },
    ...extra,
  });
  const get = async (
    url: string,
    opts: Record<string, unknown> = options(),
    lookup?: LookupFunction,
    signal?: AbortSignal,
  ) => {
    const tool = createHttpGetTool(lookup ? { lookup } : {});
    return tool.execute({ url }, toolContext('/', opts, signal));
  };
  const failure = (p: unknown) =>
    Promise.resolve(p).then(
      () => expect.fail('expected a failure'),
      (e: Error & { code?: string }) => e,
    );

  it('fetches a page from the allowed test server: status, headers, body', async () => {
    const out = await get(`https://127.0.0.1:${main.port}/ok`);
    const text = textOf(out);
    expect(text).to.match(/^HTTP 200 OK\n/);
    expect(text).to.include('content-type: text/plain; charset=utf-8');
    expect(text).to.match(/\n\nhello from the test server$/);
  });

  it('describes a binary body instead of returning it', async () => {
    expect(textOf(await get(`https://127.0.0.1:${main.port}/binary`))).to.include(
      '(binary body: 6 bytes of application/octet-stream, not shown)',
    );
  });

  it('returns an HTTP error status as a response, not a failure', async () => {
    expect(textOf(await get(`https://127.0.0.1:${main.port}/missing`))).to.match(/^HTTP 404 Not Found/);
  });

  it('refuses every scheme but https, without connecting', async () => {
    for (const url of [
      `http://127.0.0.1:${plain.port}/ok`,
      'file:///etc/passwd',
      'data:text/plain,hi',
      'ftp://127.0.0.1/',
      'gopher://127.0.0.1/',
    ]) {
      expect((await failure(get(url))).code, url).to.equal('scheme_not_allowed');
    }
    expect((await failure(get('not a url'))).code).to.equal('invalid_url');
    expect(plain.connections).to.have.length(0);
  });

  it('refuses credentials in the URL (userinfo trick)', async () => {
    expect((await failure(get(`https://good.test@127.0.0.1:${main.port}/ok`))).code).to.equal('credentials_in_url');
    expect(main.connections).to.have.length(0);
  });

  it('refuses loopback and unspecified addresses in every spelling when no test address is allowed', async () => {
    const noAllow = { dangerouslyAllowForTests: { addresses: [], ca: tls.cert } };
    const p = main.port;
    const spellings = [
      ...[
        '127.0.0.1',
        '[::1]',
        '0.0.0.0',
        '[::]',
        '2130706433',
        '0x7f000001',
        '0177.0.0.1',
        '127.1',
        '[::ffff:127.0.0.1]',
        '１２７.0.0.1',
      ],
      ...[
        '[::127.0.0.1]',
        '[::7f00:1]',
        '[::ffff:0:127.0.0.1]',
        '[64:ff9b::127.0.0.1]',
        '[2002:7f00:1::1]',
        '[2001:0:4136:e378:8000:63bf:80ff:fffe]',
      ],
    ];
    for (const host of spellings) {
      const error = await failure(get(`https://${host}:${p}/ok`, noAllow));
      expect(error.code, `${host}: ${error.message}`).to.equal('blocked_address');
    }
    const localhost = scriptedLookup(() => v4('127.0.0.1'));
    expect((await failure(get(`https://localhost:${p}/ok`, noAllow, localhost))).code).to.equal('blocked_address');
    expect(main.connections).to.have.length(0);
  });

  it('refuses loopback addresses other than the one a test allows, however spelled', async () => {
    for (const host of ['127.0.0.2', '2130706434', '0x7f000002', '127.2', '[::ffff:127.0.0.2]']) {
      expect((await failure(get(`https://${host}:${main.port}/ok`))).code, host).to.equal('blocked_address');
    }
    expect(other.connections).to.have.length(0);
  });

  it('checks the names a resolver returns: a private answer, and a mixed answer', async () => {
    const toOther = scriptedLookup(() => v4('127.0.0.2'));
    expect((await failure(get(`https://good.test:${main.port}/ok`, options(), toOther))).code).to.equal(
      'blocked_address',
    );
    const mixed = scriptedLookup(() => [
      { address: '127.0.0.1', family: 4 },
      { address: '127.0.0.2', family: 4 },
    ]);
    expect((await failure(get(`https://good.test:${main.port}/ok`, options(), mixed))).code).to.equal(
      'blocked_address',
    );
    expect(main.connections).to.have.length(0);
    expect(other.connections).to.have.length(0);
  });

  it('connects to the address it checked: a DNS answer that changes after the check cannot win', async () => {
    // First answer allowed, every later one not: a check-then-connect design would resolve twice
    // and connect to 127.0.0.2. Here the one lookup's answer is both checked and connected.
    const rebinding = scriptedLookup((_host, call) => v4(call === 1 ? '127.0.0.1' : '127.0.0.2'));
    const text = textOf(await get(`https://rebind.test:${main.port}/ok`, options(), rebinding));
    expect(text).to.match(/^HTTP 200/);
    expect(rebinding.calls).to.deep.equal(['rebind.test']);
    expect(main.connections).to.deep.equal(['127.0.0.1']);
    expect(other.connections).to.have.length(0);
  });

  it('re-resolves and re-checks on every redirect hop', async () => {
    const rebinding = scriptedLookup((_host, call) => v4(call === 1 ? '127.0.0.1' : '127.0.0.2'));
    const next = encodeURIComponent(`https://rebind.test:${main.port}/ok`);
    const error = await failure(get(`https://rebind.test:${main.port}/redirect?to=${next}`, options(), rebinding));
    expect(error.code).to.equal('blocked_address');
    expect(rebinding.calls).to.have.length(2);
    expect(main.requests).to.deep.equal([`/redirect?to=${next}`]);
    expect(other.connections).to.have.length(0);
  });

  it('blocks a redirect to a refused address, to localhost and to http://', async () => {
    const p = main.port;
    const hop = (to: string) => `https://127.0.0.1:${p}/redirect?to=${encodeURIComponent(to)}`;
    expect((await failure(get(hop(`https://127.0.0.2:${p}/ok`)))).code).to.equal('blocked_address');
    expect((await failure(get(hop(`https://[::1]:${p}/ok`)))).code).to.equal('blocked_address');
    const localhost = scriptedLookup(() => v4('127.0.0.2'));
    expect((await failure(get(hop(`https://localhost:${p}/ok`), options(), localhost))).code).to.equal(
      'blocked_address',
    );
    expect((await failure(get(hop(`http://127.0.0.1:${plain.port}/ok`)))).code).to.equal('scheme_not_allowed');
    expect(other.connections).to.have.length(0);
    expect(plain.connections).to.have.length(0);
  });

  it('follows up to 10 redirects and refuses the 11th and a loop', async () => {
    const ten = textOf(await get(`https://127.0.0.1:${main.port}/chain/10`));
    expect(ten).to.match(/^HTTP 200 OK\nurl: https:\/\/127\.0\.0\.1:\d+\/chain\/0 \(after 10 redirects\)/);
    expect((await failure(get(`https://127.0.0.1:${main.port}/chain/11`))).code).to.equal('too_many_redirects');
    expect((await failure(get(`https://127.0.0.1:${main.port}/loop`))).code).to.equal('too_many_redirects');
  });

  it('stops a gzip bomb at 1 MiB of decoded bytes', async () => {
    const out = (await get(`https://127.0.0.1:${main.port}/bomb`)) as {
      content: string;
      data: { bytes: number; truncated: boolean };
    };
    expect(out.data.bytes).to.equal(1024 * 1024);
    expect(out.data.truncated).to.equal(true);
    expect(out.content).to.match(/\[… body cut at 1048576 bytes \(decompressed\)\]$/);
  });

  it('stops a body that claims 10 GB at the cap', async () => {
    const out = (await get(`https://127.0.0.1:${main.port}/huge`)) as { data: { bytes: number; truncated: boolean } };
    expect(out.data).to.include({ bytes: 1024 * 1024, truncated: true });
  });

  it('times out a server that never answers, and one that trickles', async () => {
    const silent = await failure(get(`https://127.0.0.1:${main.port}/silent`, options({ responseTimeoutMs: 300 })));
    expect(silent.code).to.equal('timeout');
    expect(silent.message).to.match(/(response|socket) phase, 300 ms/);
    const trickle = await failure(get(`https://127.0.0.1:${main.port}/trickle`, options({ totalTimeoutMs: 400 })));
    expect(trickle.code).to.equal('timeout');
  });

  it('stops at once when the call is aborted', async () => {
    const controller = new AbortController();
    const pending = failure(get(`https://127.0.0.1:${main.port}/silent`, options(), undefined, controller.signal));
    setTimeout(() => controller.abort(new Error('stop')), 100);
    expect((await pending).message).to.equal('stop');
  });

  it('runs through the host, loaded as a built-in, with the test option', async () => {
    const host = await createHost({
      cwd: '/',
      config: { builtins: [{ name: 'http', options: options() }], policy: { default: 'allow', builtinRules: false } },
      audit: false,
    });
    try {
      const ok = await host.call('http_get', JSON.stringify({ url: `https://127.0.0.1:${main.port}/ok` }));
      expect(ok.isError).to.equal(false);
      expect(ok.content).to.match(/^HTTP 200 OK/);
      const blocked = await host.call('http_get', { url: `https://127.0.0.2:${main.port}/ok` });
      expect(blocked).to.include({ isError: true, code: 'tool_error' });
      expect(blocked.content).to.include('[blocked_address]');
    } finally {
      await host.close();
    }
  });

  // Two servers both past the SSRF guard (its test list allows both addresses), so only the host's
  // policy stands between a redirect and 127.0.0.2.
  const SECOND_HOST = 'https://127\\.0\\.0\\.2(:[0-9]+)?(/.*)?';
  const withHost = async (isolation: Isolation, policy: PolicyConfig, approve?: ApproveFn) => {
    const temp = tempDir('rh-http-audit-');
    const audit = join(temp.dir, 'audit.jsonl');
    const host = await createHost({
      cwd: temp.dir,
      config: {
        builtins: [
          {
            name: 'http',
            isolation,
            options: { dangerouslyAllowForTests: { addresses: ['127.0.0.1', '127.0.0.2'], ca: tls.cert } },
          },
        ],
        policy: { default: 'allow', builtinRules: false, ...policy },
      },
      audit,
      logLevel: 'error',
      ...(approve ? { approve } : {}),
    });
    return {
      host,
      /** The audit lines, once the host has closed (and flushed). */
      async close() {
        await host.close();
        const lines = readFileSync(audit, 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        temp.cleanup();
        return lines;
      },
    };
  };
  const hop = (to: string) => `https://127.0.0.1:${main.port}/redirect?to=${encodeURIComponent(to)}`;

  for (const isolation of ['inline', 'worker', 'process'] as const) {
    describe(`redirect hops under the host's policy (${isolation})`, function () {
      this.timeout(30_000); // hosts with a worker or a process each, on a shared machine
      it('a redirect from an allowed host to a denied one is refused, naming the hop and the rule, and never connects', async () => {
        const { host, close } = await withHost(isolation, {
          deny: [{ tool: 'http_get', where: { url: SECOND_HOST }, reason: 'not that host' }],
        });
        const denied = `https://127.0.0.2:${main.port}/ok`;
        const result = await host.call('http_get', { url: hop(denied) });
        const audit = await close();
        expect(result).to.include({ isError: true, code: 'tool_error' });
        expect(result.content).to.include(`redirect 1 to ${denied} was not followed`);
        expect(result.content).to.include('not that host (policy rule policy.deny[0])');
        expect(result.content).to.include('[redirect_denied]');
        expect(main.requests).to.have.length(1);
        expect(other.connections).to.have.length(0);
        const decisions = audit.filter((line) => line.event === 'decision');
        expect(decisions.map((d) => [d.input, d.decision, d.rule, d.source])).to.deep.equal([
          [JSON.stringify({ url: hop(denied) }), 'allow', undefined, undefined],
          [JSON.stringify({ url: denied }), 'deny', 'policy.deny[0]', 'authorize'],
        ]);
        expect(new Set(audit.map((line) => line.callId)).size).to.equal(1);
      });

      it('follows allowed hops, lists each in data and audits each', async () => {
        const { host, close } = await withHost(isolation, {
          deny: [{ tool: 'http_get', where: { url: SECOND_HOST } }],
        });
        const last = `https://127.0.0.1:${main.port}/ok`;
        const first = hop(last);
        const result = await host.call('http_get', { url: hop(first) });
        const audit = await close();
        expect(result.isError, result.content).to.equal(false);
        expect(result.data).to.deep.include({ status: 200, url: last, redirects: [first, last] });
        const hops = audit.filter((line) => line.source === 'authorize');
        expect(hops.map((d) => [d.input, d.decision])).to.deep.equal([
          [JSON.stringify({ url: first }), 'allow'],
          [JSON.stringify({ url: last }), 'allow'],
        ]);
      });

      it('an ask on a hop is a denial without an approver, and goes to the approver when there is one', async () => {
        const denied = `https://127.0.0.2:${main.port}/ok`;
        const policy: PolicyConfig = { ask: [{ tool: 'http_get', where: { url: SECOND_HOST } }] };
        const alone = await withHost(isolation, policy);
        const refused = await alone.host.call('http_get', { url: hop(denied) });
        const audit = await alone.close();
        expect(refused).to.include({ isError: true, code: 'tool_error' });
        expect(refused.content)
          .to.include(`redirect 1 to ${denied} was not followed`)
          .and.include('needs approval (policy rule policy.ask[0])');
        expect(audit.find((line) => line.source === 'authorize')).to.include({
          decision: 'ask',
          answer: 'no_approver',
        });
        expect(other.connections).to.have.length(0);

        const asked: string[] = [];
        const approver = await withHost(isolation, policy, ({ input }) => {
          asked.push(input);
          return true;
        });
        const followed = await approver.host.call('http_get', { url: hop(denied) });
        await approver.close();
        expect(followed.isError, followed.content).to.equal(false);
        expect(asked).to.deep.equal([JSON.stringify({ url: denied })]);
        expect(other.requests).to.deep.equal(['/ok']);
      });
    });
  }
});
