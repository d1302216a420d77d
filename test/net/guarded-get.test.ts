import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGuardedLookup } from '../../src/net/guarded-lookup.js';
import { guardedGet, WEB_FETCH_USER_AGENT, type GuardedGetOptions } from '../../src/net/guarded-get.js';
import { WebRequestError } from '../../src/net/web-request-error.js';
import { startLoopbackServer, tableLookup, type LoopbackServer } from './loopback-server.js';

/** A loopback server that must never be reached: every refusal is checked against its counters. */
let target: LoopbackServer;

beforeEach(async () => {
  target = await startLoopbackServer();
});

afterEach(async () => {
  await target.close();
});

function options(overrides: Partial<GuardedGetOptions> & Pick<GuardedGetOptions, 'url'>): GuardedGetOptions {
  return { allowHosts: [], timeoutMs: 5_000, maxBytes: 1024 * 1024, maxRedirects: 3, ...overrides };
}

async function failureOf(promise: Promise<unknown>): Promise<WebRequestError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WebRequestError);
  return error as WebRequestError;
}

describe('guardedGet refuses what could reach the service’s own network', () => {
  it.each([
    ['loopback literal', (port: number) => `http://127.0.0.1:${port}/`],
    ['unspecified 0.0.0.0 (which Linux routes to this machine)', (port: number) => `http://0.0.0.0:${port}/`],
    ['IPv6 loopback', (port: number) => `http://[::1]:${port}/`],
    ['IPv6 unspecified', (port: number) => `http://[::]:${port}/`],
    ['IPv4-mapped loopback, dotted', (port: number) => `http://[::ffff:127.0.0.1]:${port}/`],
    ['IPv4-mapped loopback, hex', (port: number) => `http://[::ffff:7f00:1]:${port}/`],
    ['decimal IPv4', (port: number) => `http://2130706433:${port}/`],
    ['octal IPv4', (port: number) => `http://0177.0.0.1:${port}/`],
    ['hex IPv4', (port: number) => `http://0x7f.1:${port}/`],
    ['short IPv4', (port: number) => `http://127.1:${port}/`],
    ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/'],
    ['carrier-grade NAT', () => 'http://100.64.0.1/'],
    ['unique-local IPv6', () => 'http://[fc00::1]/'],
    ['link-local IPv6', () => 'http://[fe80::1]/'],
    ['private 10/8 literal', () => 'http://10.0.0.1/'],
  ])('refuses a %s host before connecting', async (_name, url) => {
    const resolver = tableLookup({});
    const error = await failureOf(guardedGet(options({ url: url(target.port), lookup: resolver.lookup })));
    expect(error.failure).toBe('refused-address');
    expect(error.message).toMatch(/only public internet addresses/);
    expect(resolver.asked).toEqual([]);
    expect(target.connections).toBe(0);
  });

  it.each([
    ['localhost', ['127.0.0.1'], 'loopback'],
    ['intranet.test', ['10.1.2.3'], 'private'],
    ['printer.test', ['172.16.8.9'], 'private'],
    ['router.test', ['192.168.0.1'], 'private'],
    ['metadata.test', ['169.254.169.254'], 'link-local'],
    ['v6.test', ['::1'], 'loopback'],
    ['mapped.test', ['::ffff:127.0.0.1'], 'loopback'],
    ['split.test', ['93.184.215.14', '127.0.0.1'], 'loopback'],
  ])('refuses %s, which resolves to %j, inside the socket lookup', async (hostname, addresses, range) => {
    const resolver = tableLookup({ [hostname]: addresses });
    const error = await failureOf(guardedGet(options({ url: `http://${hostname}:${target.port}/`, lookup: resolver.lookup })));
    expect(error.failure).toBe('refused-address');
    expect(error.message).toContain(hostname);
    expect(error.message).toContain(range);
    // The refusal comes from the lookup Node calls before it opens a socket: the name was
    // resolved exactly once and nothing connected.
    expect(resolver.asked).toEqual([hostname]);
    expect(target.connections).toBe(0);
  });

  it('checks addresses inside the lookup for https too', async () => {
    const resolver = tableLookup({ 'secure.test': ['10.20.30.40'] });
    const error = await failureOf(guardedGet(options({ url: 'https://secure.test/', lookup: resolver.lookup })));
    expect(error.failure).toBe('refused-address');
    expect(resolver.asked).toEqual(['secure.test']);
  });

  it.each([
    ['file:///etc/passwd', /not file:/],
    ['ftp://example.com/file', /not ftp:/],
    ['gopher://127.0.0.1:70/_GET', /not gopher:/],
    ['data:text/plain,hello', /not data:/],
    ['not a url', /not a valid URL/],
  ])('refuses %s by its scheme', async (url, message) => {
    const error = await failureOf(guardedGet(options({ url })));
    expect(error.failure).toBe('refused-url');
    expect(error.message).toMatch(message);
  });

  it('refuses credentials in the URL, even for an allowed host', async () => {
    const error = await failureOf(guardedGet(options({ url: `http://user:secret@127.0.0.1:${target.port}/`, allowHosts: [target.host] })));
    expect(error.failure).toBe('refused-url');
    expect(error.message).toMatch(/credentials/);
    expect(target.connections).toBe(0);
  });

  it('allows only the listed port when the allow-list entry names one', async () => {
    const error = await failureOf(guardedGet(options({ url: target.url(), allowHosts: [`127.0.0.1:${target.port + 1}`] })));
    expect(error.failure).toBe('refused-address');
    expect(target.connections).toBe(0);
  });
});

describe('createGuardedLookup', () => {
  it('refuses a name when any address is private, even when the first one is public', async () => {
    const resolver = tableLookup({ 'split.test': ['93.184.215.14', '10.0.0.1'] });
    const lookup = createGuardedLookup({ lookup: resolver.lookup, checkAddresses: true });
    const error = await new Promise((resolve) => {
      lookup('split.test', { all: true }, (failure) => {
        resolve(failure);
      });
    });
    expect(error).toBeInstanceOf(WebRequestError);
    expect(String(error)).toMatch(/10\.0\.0\.1 is a private/);
  });

  it('hands the socket exactly the addresses it checked', async () => {
    const resolver = tableLookup({ 'public.test': ['93.184.215.14', '2606:4700:4700::1111'] });
    const lookup = createGuardedLookup({ lookup: resolver.lookup, checkAddresses: true });
    const answer = await new Promise((resolve) => {
      lookup('public.test', { all: true }, (_failure, addresses) => {
        resolve(addresses);
      });
    });
    expect(answer).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:4700:4700::1111', family: 6 },
    ]);
  });
});

describe('guardedGet redirects', () => {
  let origin: LoopbackServer;

  beforeEach(async () => {
    origin = await startLoopbackServer((request, response) => {
      const path = request.url ?? '/';
      if (path === '/to-target') response.writeHead(302, { location: `http://127.0.0.1:${target.port}/secret` }).end();
      else if (path === '/to-intranet') response.writeHead(301, { location: `http://intranet.test:${target.port}/` }).end();
      else if (path === '/to-file') response.writeHead(302, { location: 'file:///etc/passwd' }).end();
      else if (path.startsWith('/loop/')) response.writeHead(302, { location: `/loop/${Number(path.slice(6)) + 1}` }).end();
      else if (path === '/old') response.writeHead(308, { location: '/new' }).end();
      else if (path === '/new') response.end(JSON.stringify({ headers: request.headers }));
      else response.writeHead(404).end();
    });
  });

  afterEach(async () => {
    await origin.close();
  });

  it('follows a relative redirect on an allowed host and reports the chain', async () => {
    const response = await guardedGet(options({ url: origin.url('/old'), allowHosts: [origin.host] }));
    expect(response.status).toBe(200);
    expect(response.url).toBe(origin.url('/new'));
    expect(response.redirects).toEqual([origin.url('/old')]);
  });

  it('refuses a redirect from an allowed host to a loopback address it does not list', async () => {
    const error = await failureOf(guardedGet(options({ url: origin.url('/to-target'), allowHosts: [origin.host] })));
    expect(error.failure).toBe('refused-address');
    expect(target.connections).toBe(0);
  });

  it('refuses a redirect to a name that resolves to a private address', async () => {
    const resolver = tableLookup({ 'intranet.test': ['10.9.8.7'] });
    const error = await failureOf(guardedGet(options({ url: origin.url('/to-intranet'), allowHosts: [origin.host], lookup: resolver.lookup })));
    expect(error.failure).toBe('refused-address');
    expect(error.message).toContain('10.9.8.7');
    expect(resolver.asked).toEqual(['intranet.test']);
  });

  it('refuses a redirect to a file: URL', async () => {
    const error = await failureOf(guardedGet(options({ url: origin.url('/to-file'), allowHosts: [origin.host] })));
    expect(error.failure).toBe('refused-url');
  });

  it('stops a redirect chain longer than the cap', async () => {
    const error = await failureOf(guardedGet(options({ url: origin.url('/loop/0'), allowHosts: [origin.host], maxRedirects: 3 })));
    expect(error.failure).toBe('too-many-redirects');
    expect(error.message).toMatch(/3 redirects/);
    expect(origin.requests).toBe(4);
  });

  it('sends an honest User-Agent and no cookie or authorization header', async () => {
    const response = await guardedGet(options({ url: origin.url('/new'), allowHosts: [origin.host] }));
    const { headers } = JSON.parse(response.body.toString('utf8')) as { headers: Record<string, string> };
    expect(headers['user-agent']).toBe(WEB_FETCH_USER_AGENT);
    expect(headers).not.toHaveProperty('cookie');
    expect(headers).not.toHaveProperty('authorization');
    expect(headers).not.toHaveProperty('proxy-authorization');
  });
});

describe('guardedGet limits', () => {
  const bomb = gzipSync(Buffer.alloc(32 * 1024 * 1024));
  let server: LoopbackServer;
  let closedEarly: Promise<void>;

  beforeEach(async () => {
    let markClosed = (): void => undefined;
    closedEarly = new Promise((resolve) => {
      markClosed = resolve;
    });
    server = await startLoopbackServer((request, response) => {
      response.on('close', () => {
        if (!response.writableFinished) markClosed();
      });
      switch (request.url) {
        case '/huge':
          response.writeHead(200, { 'content-type': 'text/plain' });
          void streamForever(response);
          return;
        case '/bomb':
          response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(bomb);
          return;
        case '/br':
          response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'br' }).end(brotliCompressSync('brotli body'));
          return;
        case '/deflate':
          response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'deflate' }).end(deflateSync('deflate body'));
          return;
        case '/bad-gzip':
          response.writeHead(200, { 'content-encoding': 'gzip' }).end('not gzip at all');
          return;
        case '/hang':
          return;
        default:
          response.end('ok');
      }
    });
  });

  afterEach(async () => {
    await server.close();
  });

  it('cuts a body over the byte cap and closes the connection', async () => {
    const response = await guardedGet(options({ url: server.url('/huge'), allowHosts: [server.host], maxBytes: 64 * 1024 }));
    expect(response.truncated).toBe(true);
    expect(response.body.length).toBe(64 * 1024);
    await closedEarly;
  });

  it('caps a gzip bomb on its decoded size', async () => {
    const response = await guardedGet(options({ url: server.url('/bomb'), allowHosts: [server.host], maxBytes: 256 * 1024 }));
    expect(response.truncated).toBe(true);
    expect(response.body.length).toBe(256 * 1024);
    // The whole bomb is smaller than the cap: only counting decoded bytes can stop it.
    expect(bomb.length).toBeLessThan(256 * 1024);
    expect(response.wireBytes).toBeLessThanOrEqual(bomb.length);
  });

  it('decodes brotli and deflate bodies', async () => {
    const brotli = await guardedGet(options({ url: server.url('/br'), allowHosts: [server.host] }));
    const deflate = await guardedGet(options({ url: server.url('/deflate'), allowHosts: [server.host] }));
    expect(brotli.body.toString()).toBe('brotli body');
    expect(deflate.body.toString()).toBe('deflate body');
  });

  it('reports a body that does not decode', async () => {
    const error = await failureOf(guardedGet(options({ url: server.url('/bad-gzip'), allowHosts: [server.host] })));
    expect(error.failure).toBe('decode');
  });

  it('times out a server that never answers', async () => {
    const error = await failureOf(guardedGet(options({ url: server.url('/hang'), allowHosts: [server.host], timeoutMs: 150 })));
    expect(error.failure).toBe('timeout');
    expect(error.message).toMatch(/150 ms/);
  });

  it('stops a hanging fetch as soon as the turn is cancelled', async () => {
    const controller = new AbortController();
    const pending = guardedGet(options({ url: server.url('/hang'), allowHosts: [server.host], timeoutMs: 60_000, signal: controller.signal }));
    while (server.requests === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    const error = await failureOf(pending);
    expect(error.failure).toBe('aborted');
    await closedEarly;
  });

  it('does not start when the signal is already aborted', async () => {
    const error = await failureOf(guardedGet(options({ url: server.url('/'), allowHosts: [server.host], signal: AbortSignal.abort() })));
    expect(error.failure).toBe('aborted');
    expect(server.connections).toBe(0);
  });
});

async function streamForever(response: ServerResponse): Promise<void> {
  const chunk = Buffer.alloc(16 * 1024, 'a');
  // One close promise for the whole stream: a new one per drain would pile up listeners.
  const closed = once(response, 'close');
  while (!response.destroyed) {
    if (!response.write(chunk)) {
      await Promise.race([once(response, 'drain'), closed]);
    }
  }
}
