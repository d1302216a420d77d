import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createBraveProvider } from '../../../src/tools/web/search/brave-provider.js';
import type { SearchProvider } from '../../../src/tools/web/search/search-provider.js';
import { createSearxngProvider } from '../../../src/tools/web/search/searxng-provider.js';
import { createTavilyProvider } from '../../../src/tools/web/search/tavily-provider.js';
import { everythingVisibleAbout, useLoopbackServers, failure } from './start-loopback-server.js';

const API_KEY = 'transport-secret-key-42';

interface ProviderCase {
  readonly label: string;
  readonly create: (options: { baseUrl: string; timeoutMs?: number; maxResponseBytes?: number }) => SearchProvider;
}

const providers: readonly ProviderCase[] = [
  { label: 'SearXNG', create: (options) => createSearxngProvider(options) },
  { label: 'Brave', create: (options) => createBraveProvider({ ...options, apiKey: API_KEY }) },
  { label: 'Tavily', create: (options) => createTavilyProvider({ ...options, apiKey: API_KEY }) },
];

const serve = useLoopbackServers();

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => { resolve(); }));
  return port;
}

describe.each(providers)('$label transport', ({ label, create }) => {
  it('stops a search the turn cancels while the server is still thinking', async () => {
    let arrived!: () => void;
    const requestArrived = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    let closedByClient!: () => void;
    const connectionClosed = new Promise<void>((resolve) => {
      closedByClient = resolve;
    });
    const server = await serve((_request, response) => {
      response.on('close', closedByClient);
      arrived();
      // Never answers.
    });
    const turn = new AbortController();
    const pending = create({ baseUrl: server.baseUrl }).search({ query: 'slow', limit: 3, signal: turn.signal });
    await requestArrived;
    turn.abort();

    const error = await failure(pending);
    expect(error.reason).toBe('cancelled');
    expect(error.message).toBe(`${label} search was cancelled`);
    await connectionClosed;
  });

  it('stops reading a body that stalls halfway when the turn is cancelled', async () => {
    let sentHead!: () => void;
    const headSent = new Promise<void>((resolve) => {
      sentHead = resolve;
    });
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"results": [');
      sentHead();
    });
    const turn = new AbortController();
    const pending = create({ baseUrl: server.baseUrl }).search({ query: 'stall', limit: 3, signal: turn.signal });
    await headSent;
    turn.abort();
    expect((await failure(pending)).reason).toBe('cancelled');
  });

  it('does not even call when the turn is already cancelled', async () => {
    const server = await serve(() => undefined);
    const turn = new AbortController();
    turn.abort();
    const error = await failure(create({ baseUrl: server.baseUrl }).search({ query: 'x', limit: 3, signal: turn.signal }));
    expect(error.reason).toBe('cancelled');
    expect(server.requests).toHaveLength(0);
  });

  it('gives up after its time limit and says so', async () => {
    const server = await serve(() => undefined);
    const error = await failure(create({ baseUrl: server.baseUrl, timeoutMs: 50 }).search({ query: 'x', limit: 3, signal: new AbortController().signal }));
    expect(error.reason).toBe('timeout');
    expect(error.message).toBe(`${label} search failed: no complete answer within 50 ms; try again, or narrow the query`);
  });

  it('refuses a body larger than 2 MiB by default, without reading it all', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      response.write('{"results": [], "padding": "');
      // 3 MiB, chunked, with no Content-Length to trust.
      for (let sent = 0; sent < 3 * 1024 * 1024; sent += chunk.length) response.write(chunk);
      response.end('"}');
    });
    const error = await failure(create({ baseUrl: server.baseUrl }).search({ query: 'x', limit: 3, signal: new AbortController().signal }));
    expect(error.reason).toBe('bad_response');
    expect(error.message).toBe(`${label} search failed: the answer was larger than 2 MB and was not read; try again later`);
  });

  it('refuses a body whose Content-Length is over the limit before reading it', async () => {
    const server = await serve((_request, response) => {
      const body = JSON.stringify({ results: [], padding: 'x'.repeat(4096) });
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      response.end(body);
    });
    const error = await failure(create({ baseUrl: server.baseUrl, maxResponseBytes: 1024 }).search({ query: 'x', limit: 3, signal: new AbortController().signal }));
    expect(error.message).toBe(`${label} search failed: the answer was larger than 1 KB and was not read; try again later`);
  });

  it('says the service could not be reached when nothing listens', async () => {
    const port = await closedPort();
    const error = await failure(create({ baseUrl: `http://127.0.0.1:${String(port)}` }).search({ query: 'x', limit: 3, signal: new AbortController().signal }));
    expect(error.reason).toBe('network');
    expect(error.message).toBe(`${label} search failed: could not reach the search service (ECONNREFUSED); try again in a moment`);
    expect(everythingVisibleAbout(error)).not.toContain(API_KEY);
  });

  it('answers a server that hangs up mid-request with a network error', async () => {
    const server = await serve((_request, response) => {
      response.socket?.destroy();
    });
    const error = await failure(create({ baseUrl: server.baseUrl }).search({ query: 'x', limit: 3, signal: new AbortController().signal }));
    expect(error.reason).toBe('network');
    expect(error.message).toMatch(new RegExp(`^${label} search failed: could not reach the search service`));
  });
});
