// Local HTTPS servers for http_get's tests: a self-signed certificate made with openssl at test
// time, servers bound to loopback addresses only, and a record of every TCP connection they accept.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { tempDir } from '../../helpers.ts';

export const TEST_HOSTS = ['good.test', 'rebind.test', 'localhost'];

export function makeCertificate(): { cert: string; key: string } {
  const { dir, cleanup } = tempDir('rh-cert-');
  try {
    const san = [...TEST_HOSTS.map((h) => `DNS:${h}`), 'IP:127.0.0.1', 'IP:127.0.0.2', 'IP:::1'].join(',');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=rousseau-test',
        '-addext',
        `subjectAltName=${san}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    cleanup();
  }
}

export interface TestServer {
  server: Server | HttpServer;
  host: string;
  port: number;
  /** Remote addresses of accepted TCP connections. */
  connections: string[];
  /** Paths requested. */
  requests: string[];
  close(): Promise<void>;
}

const BOMB = gzipSync(Buffer.alloc(20 * 1024 * 1024, 0x61)); // 20 MiB of "a", ~20 KB on the wire

function route(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'https://x');
  const path = url.pathname;
  if (path === '/ok') {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('hello from the test server');
  } else if (path === '/redirect') {
    res.writeHead(302, { location: url.searchParams.get('to') ?? '/ok' }).end();
  } else if (path.startsWith('/chain/')) {
    const n = Number(path.slice('/chain/'.length));
    if (n <= 0) res.writeHead(200, { 'content-type': 'text/plain' }).end('end of chain');
    else res.writeHead(302, { location: `/chain/${n - 1}` }).end();
  } else if (path === '/loop') {
    res.writeHead(302, { location: '/loop' }).end();
  } else if (path === '/bomb') {
    res
      .writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip', 'content-length': BOMB.length })
      .end(BOMB);
  } else if (path === '/huge') {
    // Claims 10 GB and streams until the client hangs up.
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(10 * 1024 ** 3) });
    const chunk = Buffer.alloc(64 * 1024, 0x62);
    const pump = () => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once('drain', pump);
    };
    pump();
  } else if (path === '/binary') {
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from([0, 1, 2, 3, 255, 254]));
  } else if (path === '/silent') {
    // Never answers: the client's response timeout must fire.
  } else if (path === '/trickle') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write('.')), 50);
    res.on('close', () => clearInterval(timer));
  } else {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  }
}

function track(server: Server | HttpServer, host: string, port: number): Promise<TestServer> {
  const connections: string[] = [];
  const requests: string[] = [];
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (socket) => {
    connections.push(socket.remoteAddress ?? '?');
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('request', (req: IncomingMessage) => requests.push(req.url ?? ''));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      resolve({
        server,
        host,
        port: (server.address() as AddressInfo).port,
        connections,
        requests,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** An HTTPS server on `host` (a loopback address), on `port` or a free one. */
export function startHttpsServer(
  tls: { cert: string; key: string },
  host = '127.0.0.1',
  port = 0,
): Promise<TestServer> {
  return track(createServer(tls, route), host, port);
}

/** A plain HTTP server, to show that a redirect to http:// never reaches it. */
export function startHttpServer(host = '127.0.0.1'): Promise<TestServer> {
  return track(createHttpServer(route), host, 0);
}
