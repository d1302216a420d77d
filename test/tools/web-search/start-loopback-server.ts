import { afterEach, expect } from 'vitest';
import { SearchProviderError } from '../../../src/tools/web/search/search-provider-error.js';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the loopback server received it, body included. */
export interface RecordedRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

export type LoopbackHandler = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

/** A real HTTP server on 127.0.0.1 and a free port, standing in for a search service. */
export async function startLoopbackServer(handler: LoopbackHandler): Promise<LoopbackServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const recorded: RecordedRequest = {
        method: incoming.method ?? '',
        url: incoming.url ?? '',
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      void Promise.resolve(handler(recorded, response)).catch((error: unknown) => {
        response.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${String(port)}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => { resolve(); });
      }),
  };
}

/** Answers with a JSON body. */
export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  response.end(text);
}

/** The query parameters of a recorded request, as a plain object. */
export function queryOf(request: RecordedRequest): Record<string, string> {
  return Object.fromEntries(new URL(request.url, 'http://loopback').searchParams);
}

/** The path of a recorded request, without its query. */
export function pathOf(request: RecordedRequest): string {
  return new URL(request.url, 'http://loopback').pathname;
}

/** Everything about an error a person or a log could see, to check a secret is in none of it. */
export function everythingVisibleAbout(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return [error.message, error.stack ?? '', String(error), JSON.stringify(error), JSON.stringify(Object.entries(error)), String(error.cause)].join('\n');
}

/** Loopback servers started by a suite, closed after each test (call `useLoopbackServers()` at the top). */
export function useLoopbackServers(): (handler: LoopbackHandler) => Promise<LoopbackServer> {
  const servers: LoopbackServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return async (handler) => {
    const server = await startLoopbackServer(handler);
    servers.push(server);
    return server;
  };
}

/** The SearchProviderError a promise rejects with (failing the test when it resolves or throws something else). */
export async function failure(promise: Promise<unknown>): Promise<SearchProviderError> {
  const error: unknown = await promise.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(SearchProviderError);
  return error as SearchProviderError;
}
