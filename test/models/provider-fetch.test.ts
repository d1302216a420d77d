import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createProviderFetch, providerRequestBody, providerResponseBody } from '../../src/models/provider-fetch.js';

interface Seen {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

describe('the provider fetch (undici request under the fetch signature)', () => {
  let server: Server;
  let base: string;
  let handler: (request: IncomingMessage, response: ServerResponse) => void;
  const seen: Seen[] = [];
  beforeEach(async () => {
    seen.length = 0;
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        seen.push({ method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        handler(request, response);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  async function readAll(response: Response): Promise<string> {
    const body = providerResponseBody(response);
    if (body === null) return '';
    const chunks: Uint8Array[] = [];
    for await (const chunk of body as AsyncIterable<Uint8Array>) chunks.push(chunk);
    return Buffer.concat(chunks).toString('utf8');
  }

  it('sends the method, headers and bytes as given, and streams the answer with its status and headers', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req_1' });
      response.write('data: one\n\n');
      setTimeout(() => response.end('data: two\n\n'), 20);
    };
    const providerFetch = createProviderFetch();
    const headers = new Headers({ 'content-type': 'application/json', authorization: 'Bearer sk-test' });

    const response = await providerFetch(`${base}/v1/responses`, { method: 'POST', headers, body: Buffer.from('{"model":"m","input":"grüß"}') });

    expect(response.status).toBe(200);
    expect(response.ok).toBe(true);
    expect(response.headers.get('x-request-id')).toBe('req_1');
    expect(response.body).toBeNull();
    expect(await readAll(response)).toBe('data: one\n\ndata: two\n\n');
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/responses', body: '{"model":"m","input":"grüß"}' });
    expect(seen[0]!.headers).toMatchObject({ 'content-type': 'application/json', authorization: 'Bearer sk-test' });
  });

  it('sends a body of pieces joined, with its content-length, and holds none of it afterwards', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end('data: ok\n\n');
    };
    const pieces = ['{"input":[', '{"a":"grüß"}', ',', '{"b":2}', ']}'];
    const body = providerRequestBody({ pieces, byteLength: pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0) });

    const response = await createProviderFetch()(`${base}/v1/responses`, { method: 'POST', body, duplex: 'half' });
    await readAll(response);

    expect(seen[0]!.body).toBe('{"input":[{"a":"grüß"},{"b":2}]}');
    expect(seen[0]!.headers['content-length']).toBe(String(Buffer.byteLength(seen[0]!.body)));
    expect(seen[0]!.headers['transfer-encoding']).toBeUndefined();
    // The stream the SDK keeps for the request's life has given its pieces away.
    const left = await new Response(body).text();
    expect(left).toBe('');
  });

  it('reads as an ordinary stream for any other fetch', async () => {
    handler = (_request, response) => {
      response.end('ok');
    };
    const pieces = ['{"x":', '1}'];

    const response = await fetch(`${base}/v1/responses`, { method: 'POST', body: providerRequestBody({ pieces, byteLength: 7 }), duplex: 'half' });

    expect(await response.text()).toBe('ok');
    expect(seen[0]!.body).toBe('{"x":1}');
  });

  it('gives a failed request its body as text, cut at 1 MiB', async () => {
    handler = (_request, response) => {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' });
      response.end(JSON.stringify({ error: { message: 'slow down', pad: 'x'.repeat(3 * 1024 * 1024) } }));
    };
    const response = await createProviderFetch()(`${base}/v1/responses`, { method: 'POST', body: '{}' });

    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('2');
    const text = await response.text();
    expect(text.length).toBe(1024 * 1024);
    expect(text.startsWith('{"error":{"message":"slow down"')).toBe(true);
  });

  it('follows no redirect: the request fails as fetch fails one sent with redirect: error', async () => {
    handler = (_request, response) => {
      response.writeHead(307, { location: '/elsewhere' });
      response.end();
    };
    const failure = await createProviderFetch()(`${base}/v1/responses`, { method: 'POST', body: '{}' }).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as TypeError).message).toBe('fetch failed');
    expect(String((failure as TypeError).cause)).toMatch(/unexpected redirect \(HTTP 307\)/);
    expect(seen).toHaveLength(1);
  });

  it('fails with fetch failed, caused by the socket error, when nothing listens', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));

    const failure = await createProviderFetch()(`http://127.0.0.1:${port}/v1/responses`, { method: 'POST', body: '{}' }).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as TypeError).message).toBe('fetch failed');
    expect(String((failure as TypeError).cause)).toMatch(/ECONNREFUSED/);
  });

  it('rejects with the signal\'s reason when aborted before the answer, and stops a body being read', async () => {
    handler = () => {
      // never answers
    };
    const waiting = new AbortController();
    const pending = createProviderFetch()(`${base}/v1/responses`, { method: 'POST', body: '{}', signal: waiting.signal });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const reason = new Error('caller left');
    waiting.abort(reason);
    await expect(pending).rejects.toBe(reason);

    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
    };
    const reading = new AbortController();
    const response = await createProviderFetch()(`${base}/v1/responses`, { method: 'POST', body: '{}', signal: reading.signal });
    const body = providerResponseBody(response) as Readable;
    const first = await new Promise<Buffer>((resolve) => body.once('data', resolve));
    expect(first.toString()).toBe('data: first\n\n');
    const ended = new Promise<unknown>((resolve) => {
      body.once('error', resolve);
      body.once('close', () => { resolve('closed'); });
    });
    reading.abort(new Error('caller left'));
    expect(await ended).toBeDefined();
    expect(body.destroyed).toBe(true);
  });

  it('lets go of a body left unread without an unhandled error', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
    };
    const response = await createProviderFetch()(`${base}/v1/responses`, { method: 'POST', body: '{}' });
    const body = providerResponseBody(response) as Readable;
    for await (const chunk of body) {
      expect(String(chunk)).toBe('data: first\n\n');
      break;
    }
    expect(body.destroyed).toBe(true);
    // An unhandled 'error' would fail this file (vitest reports it); give it a turn to surface.
    await new Promise((resolve) => setTimeout(resolve, 20));
  });
});
