import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeResponsesRequest } from '../../src/models/encode-responses-request.js';
import { createResponsesEndpoint, postResponsesStream } from '../../src/models/responses-endpoint.js';
import { providerResponseBody } from '../../src/models/provider-fetch.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

interface Seen {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

describe('postResponsesStream', () => {
  let server: Server;
  let baseUrl = '';
  const seen: Seen[] = [];
  let answer: (response: ServerResponse) => void = (response) => response.end();

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        seen.push({ method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        answer(response);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const body = () => encodeResponsesRequest({ model: 'm', request: { instructions: 'x', input: [{ type: 'message', role: 'user', content: 'hi' }], tools: [], toolChoice: 'auto' }, includeEncryptedReasoning: false });

  it('posts the encoded body to <base>/responses with the bearer key, JSON in, an event stream asked for, and our own user agent', async () => {
    answer = (response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end('data: {"type":"response.completed"}\n\n');
    };
    for (const base of [baseUrl, `${baseUrl}/`]) {
      const response = await postResponsesStream(createResponsesEndpoint({ apiKey: 'sk-key', baseUrl: base }), body(), new AbortController().signal);
      expect(response.status).toBe(200);
      const stream = providerResponseBody(response);
      let text = '';
      for await (const chunk of stream as AsyncIterable<Buffer>) text += chunk.toString('utf8');
      expect(text).toBe('data: {"type":"response.completed"}\n\n');
      const request = seen.at(-1);
      expect(request?.method).toBe('POST');
      expect(request?.url).toBe('/v1/responses');
      expect(request?.headers).toMatchObject({ authorization: 'Bearer sk-key', 'content-type': 'application/json', accept: 'text/event-stream', 'user-agent': `turn-runtime/${version}` });
      expect(JSON.parse(request?.body ?? '')).toMatchObject({ model: 'm', stream: true, input: [{ role: 'user', content: 'hi' }] });
    }
  });

  it("turns a refusal into the SDK's APIError for its status, with the provider's JSON error, or its text, and its headers", async () => {
    answer = (response) => {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
      response.end(JSON.stringify({ error: { message: 'slow down', type: 'rate_limit' } }));
    };
    const endpoint = createResponsesEndpoint({ apiKey: 'k', baseUrl });
    const refused = await postResponsesStream(endpoint, body(), new AbortController().signal).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(APIError);
    const apiError = refused as APIError;
    expect(apiError.constructor.name).toBe('RateLimitError');
    expect(apiError.status).toBe(429);
    expect(apiError.error).toEqual({ message: 'slow down', type: 'rate_limit' });
    expect(apiError.headers?.get('retry-after')).toBe('3');

    answer = (response) => {
      response.writeHead(502, { 'content-type': 'text/plain' });
      response.end('bad gateway, upstream gone');
    };
    const text = (await postResponsesStream(endpoint, body(), new AbortController().signal).catch((error: unknown) => error)) as APIError;
    expect(text).toBeInstanceOf(APIError);
    expect(text.status).toBe(502);
    expect(text.message).toBe('502 bad gateway, upstream gone');
  });

  it('fails a request that cannot be sent as an APIConnectionError caused by fetch\'s own error', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = (await postResponsesStream(createResponsesEndpoint({ apiKey: 'k', baseUrl: `http://127.0.0.1:${port}` }), body(), new AbortController().signal).catch((failure: unknown) => failure)) as APIConnectionError;
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).not.toBeInstanceOf(APIConnectionTimeoutError);
    expect(String((error.cause as Error).cause)).toMatch(/ECONNREFUSED/);
  });

  it('tells a fetch that timed out apart, and an aborted request from both', async () => {
    const timingOut = createResponsesEndpoint({
      apiKey: 'k',
      baseUrl,
      fetch: () => Promise.reject(new TypeError('fetch failed', { cause: new Error('Connect Timeout Error (attempted address: x:443, timeout: 10ms)') })),
    });
    await expect(postResponsesStream(timingOut, body(), new AbortController().signal)).rejects.toBeInstanceOf(APIConnectionTimeoutError);

    const aborted = new AbortController();
    aborted.abort(new Error('gone'));
    await expect(postResponsesStream(createResponsesEndpoint({ apiKey: 'k', baseUrl }), body(), aborted.signal)).rejects.toBeInstanceOf(APIUserAbortError);

    answer = () => undefined; // never answers: the request is aborted while it waits
    const during = new AbortController();
    const before = seen.length;
    const waiting = postResponsesStream(createResponsesEndpoint({ apiKey: 'k', baseUrl }), body(), during.signal);
    for (let tries = 0; seen.length === before && tries < 200; tries += 1) await new Promise((resolve) => setTimeout(resolve, 5));
    during.abort(new Error('the client went away'));
    await expect(waiting).rejects.toBeInstanceOf(APIUserAbortError);
  });
});
