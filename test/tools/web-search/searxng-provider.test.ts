import { describe, expect, it } from 'vitest';
import { createSearxngProvider } from '../../../src/tools/web/search/searxng-provider.js';
import { searxngAnswer, searxngResult } from './searxng-fixtures.js';
import { pathOf, queryOf, sendJson, type LoopbackServer, useLoopbackServers, failure } from './start-loopback-server.js';

const serve = useLoopbackServers();

function search(server: LoopbackServer, options: { query?: string; limit?: number } = {}) {
  return createSearxngProvider({ baseUrl: server.baseUrl }).search({
    query: options.query ?? 'bun vs node',
    limit: options.limit ?? 8,
    signal: new AbortController().signal,
  });
}

describe('SearXNG provider', () => {
  it('sends GET /search?q=…&format=json, as the Search API documents', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 200, searxngAnswer());
    });
    await search(server, { query: 'bun vs node' });

    const [request] = server.requests;
    expect(request?.method).toBe('GET');
    expect(pathOf(request!)).toBe('/search');
    expect(queryOf(request!)).toEqual({ q: 'bun vs node', format: 'json' });
    // Accept keeps text/html: SearXNG's bot limiter refuses clients whose Accept lacks it.
    expect(request?.headers['accept']).toContain('text/html');
    expect(request?.headers['authorization']).toBeUndefined();
  });

  it('maps results in their merged order, content to snippet, publishedDate to a date', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 200, searxngAnswer());
    });
    expect(await search(server)).toEqual([
      {
        title: 'Bun — A fast all-in-one JavaScript runtime',
        url: 'https://bun.sh/docs',
        snippet: 'Bun is a fast JavaScript all-in-one toolkit. It ships as a single executable called bun.',
      },
      {
        title: 'Node.js vs Bun: a comparison',
        url: 'https://betterstack.com/community/guides/scaling-nodejs/nodejs-vs-bun/',
        snippet: 'In this article we compare Node.js and Bun & look at speed, compatibility and tooling.',
        publishedAt: '2024-05-01',
      },
      {
        title: 'Bun 1.0 | Hacker News',
        url: 'https://news.ycombinator.com/item?id=37440658',
        snippet: '',
        publishedAt: '2023-09-08',
      },
    ]);
  });

  it('cuts its fixed-size page to the limit', async () => {
    const page = Array.from({ length: 25 }, (_, index) => searxngResult({ url: `https://example.com/${String(index)}`, title: `Result ${String(index)}` }));
    const server = await serve((_request, response) => {
      sendJson(response, 200, searxngAnswer({ results: page }));
    });
    const results = await search(server, { limit: 4 });
    expect(results.map((result) => result.title)).toEqual(['Result 0', 'Result 1', 'Result 2', 'Result 3']);
  });

  it('skips results without a usable URL and titles untitled ones by host', async () => {
    const server = await serve((_request, response) => {
      sendJson(
        response,
        200,
        searxngAnswer({
          results: [
            searxngResult({ url: null, title: 'An answer with no link' }),
            { ...searxngResult({ url: 'https://example.com/x' }), url: 'javascript:alert(document.cookie)', title: 'Bad' },
            { url: 'https://example.org/untitled' },
          ],
        }),
      );
    });
    expect(await search(server)).toEqual([{ title: 'example.org', url: 'https://example.org/untitled', snippet: '' }]);
  });

  it('returns nothing when nothing matched', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 200, searxngAnswer({ results: [] }));
    });
    expect(await search(server)).toEqual([]);
  });

  it('says so when the engines failed rather than claiming there were no results', async () => {
    const server = await serve((_request, response) => {
      sendJson(
        response,
        200,
        searxngAnswer({
          results: [],
          unresponsive_engines: [
            ['google', 'too many requests'],
            ['duckduckgo', 'timeout'],
          ],
        }),
      );
    });
    const error = await failure(search(server));
    expect(error.reason).toBe('unavailable');
    expect(error.message).toBe(
      'SearXNG search failed: no results, and 2 of its search engines did not answer (google: too many requests, duckduckgo: timeout); try again in a moment',
    );
  });

  it('explains a 403 as JSON output not being enabled on the instance', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(403, { 'content-type': 'text/html' });
      response.end('<!DOCTYPE html><title>403 Forbidden</title><h1>Forbidden</h1>');
    });
    const error = await failure(search(server));
    expect(error.message).toMatch(/^SearXNG search failed: 403 the instance refused JSON output \(json is not enabled under search\.formats\); web search is misconfigured/);
  });

  it.each([
    [401, /^SearXNG search failed: 401 the service rejected the server credentials; web search is misconfigured/],
    [429, /^SearXNG search failed: 429 rate limited by the instance's bot limiter; try again later or narrow the query$/],
    [500, /^SearXNG search failed: 500 the search service is having problems; try again in a moment$/],
  ])('turns HTTP %i into an error the model can act on', async (status, message) => {
    const server = await serve((_request, response) => {
      response.writeHead(status, { 'content-type': 'text/html' });
      response.end('<html><body>error page</body></html>');
    });
    expect((await failure(search(server))).message).toMatch(message);
  });

  it('rejects a body without a results list', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 200, { query: 'bun vs node', answers: [] });
    });
    expect((await failure(search(server))).message).toBe(
      'SearXNG search failed: the service answered in an unexpected format (results: expected array, received undefined); try again later',
    );
  });

  it('rejects a result whose fields have the wrong types', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 200, searxngAnswer({ results: [{ url: 'https://example.com', title: ['not', 'a', 'string'] }] }));
    });
    expect((await failure(search(server))).message).toContain('(results[0].title: expected string, received array)');
  });

  it('keeps an instance mounted under a path', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 200, searxngAnswer());
    });
    await createSearxngProvider({ baseUrl: `${server.baseUrl}/searxng` }).search({ query: 'q', limit: 1, signal: new AbortController().signal });
    expect(pathOf(server.requests[0]!)).toBe('/searxng/search');
  });
});
