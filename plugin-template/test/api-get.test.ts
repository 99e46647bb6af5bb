// api_get, called directly against a real loopback server: what it sends, what it returns, its caps.
import { expect } from 'chai';
import { once } from 'node:events';
import { apiGet } from '../src/api-get.ts';
import { textOf, toolContext } from './context.ts';
import { startServer, type TestServer } from './server.ts';

describe('api_get', () => {
  let server: TestServer;
  afterEach(() => server?.close());

  it('GETs the path under the base URL, with the token, and returns status and body', async () => {
    server = await startServer((_req, res) => res.end('{"id":42}'));
    const tool = apiGet({ baseUrl: `${server.url}/v1/`, token: 's3cret', maxBytes: 1024 });
    const out = await tool.execute({ path: '/items/42?fields=id' }, toolContext());
    expect(out).to.deep.equal({ content: 'HTTP 200 OK\n{"id":42}', isError: false });
    expect(server.requests[0]?.url).to.equal('/v1/items/42?fields=id');
    expect(server.requests[0]?.headers.authorization).to.equal('Bearer s3cret');
  });

  it('reports a status of 400 or more as an error result, body included', async () => {
    server = await startServer((_req, res) => {
      res.statusCode = 404;
      res.end('no such item');
    });
    const out = await apiGet({ baseUrl: server.url, maxBytes: 1024 }).execute({ path: '/items/7' }, toolContext());
    expect(out).to.deep.equal({ content: 'HTTP 404 Not Found\nno such item', isError: true });
  });

  it('returns at most maxBytes of the body and says it cut it', async () => {
    server = await startServer((_req, res) => res.end('x'.repeat(100_000)));
    const text = textOf(await apiGet({ baseUrl: server.url, maxBytes: 300 }).execute({ path: '/big' }, toolContext()));
    const [status, body, marker] = text.split('\n');
    expect(status).to.equal('HTTP 200 OK');
    expect(body).to.have.length(300);
    expect(marker).to.equal('[truncated: first 300 bytes of the body shown]');
  });

  it('does not follow redirects: it returns the status and the Location', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(302, { location: 'https://elsewhere.example/' });
      res.end();
    });
    const text = textOf(
      await apiGet({ baseUrl: server.url, maxBytes: 300 }).execute({ path: '/moved' }, toolContext()),
    );
    expect(text).to.equal('HTTP 302 Found\nLocation: https://elsewhere.example/\n');
    expect(server.requests).to.have.length(1);
  });

  it('aborts the request when the signal fires', async () => {
    server = await startServer(() => {}); // never answers
    const controller = new AbortController();
    const running = apiGet({ baseUrl: server.url, maxBytes: 300 }).execute(
      { path: '/slow' },
      toolContext({ signal: controller.signal }),
    );
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const closed = once(server.requests[0]!.socket, 'close');
    controller.abort(new DOMException('timed out', 'TimeoutError'));
    const thrown = await Promise.resolve(running).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(thrown).to.have.property('name', 'TimeoutError');
    await closed; // the connection went away: the tool did not leave it open
  });

  it('refuses a path that would leave the API host, even if the schema were loosened', async () => {
    server = await startServer((_req, res) => res.end('should not be reached'));
    let thrown: unknown;
    try {
      await apiGet({ baseUrl: server.url, maxBytes: 300 }).execute({ path: '//evil.example/x' }, toolContext());
    } catch (error) {
      thrown = error;
    }
    expect(String(thrown)).to.match(/leaves http:\/\/127\.0\.0\.1/);
    expect(server.requests).to.have.length(0);
  });
});
