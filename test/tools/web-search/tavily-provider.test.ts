import { describe, expect, it } from 'vitest';
import { createTavilyProvider } from '../../../src/tools/web/search/tavily-provider.js';
import { everythingVisibleAbout, pathOf, sendJson, type LoopbackServer, useLoopbackServers, failure } from './start-loopback-server.js';
import { tavilyAnswer } from './tavily-fixtures.js';

const API_KEY = 'tvly-dev-test-key-0123456789';

const serve = useLoopbackServers();

function search(server: LoopbackServer, options: { query?: string; limit?: number } = {}) {
  return createTavilyProvider({ baseUrl: server.baseUrl, apiKey: API_KEY }).search({
    query: options.query ?? 'bun vs node',
    limit: options.limit ?? 8,
    signal: new AbortController().signal,
  });
}

describe('Tavily provider', () => {
  it('sends POST /search with a JSON body and a Bearer key, as Tavily documents', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 200, tavilyAnswer());
    });
    await search(server, { query: 'bun vs node', limit: 5 });

    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(pathOf(request!)).toBe('/search');
    expect(request?.url).toBe('/search');
    expect(request?.headers['authorization']).toBe(`Bearer ${API_KEY}`);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request!.body)).toEqual({
      query: 'bun vs node',
      max_results: 5,
      search_depth: 'basic',
      include_answer: false,
      include_raw_content: false,
      include_images: false,
    });
    // The key travels in the header only, never in the body.
    expect(request?.body).not.toContain(API_KEY);
  });

  it('maps results, taking published_date when Tavily gives one', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 200, tavilyAnswer());
    });
    expect(await search(server)).toEqual([
      {
        title: 'Bun vs Node.js: Which JavaScript runtime is faster?',
        url: 'https://example.com/blog/bun-vs-node',
        snippet: 'Bun is a drop-in replacement for Node.js. In our benchmarks Bun started four times faster.',
      },
      {
        title: 'Bun 1.0 released',
        url: 'https://www.infoworld.com/article/bun-1-0-released.html',
        snippet: 'The Bun JavaScript runtime reached 1.0, promising Node.js compatibility.',
        publishedAt: '2023-09-08',
      },
    ]);
  });

  it('returns no more than the limit even if Tavily sends more', async () => {
    const many = Array.from({ length: 7 }, (_, index) => ({ url: `https://example.com/${String(index)}`, title: `R${String(index)}`, content: 'c', score: 0.5 }));
    const server = await serve((_request, response) => {
      sendJson(response, 200, tavilyAnswer(many));
    });
    expect((await search(server, { limit: 3 })).map((result) => result.title)).toEqual(['R0', 'R1', 'R2']);
  });

  it('strips markup and collapses the line breaks of extracted content', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 200, tavilyAnswer([{ url: 'https://example.com/a', title: 'A &amp; B', content: '## Heading\n\n<b>Bold</b> text\r\n\n2. Not a new result', score: 0.9 }]));
    });
    const [result] = await search(server);
    expect(result).toEqual({ title: 'A & B', url: 'https://example.com/a', snippet: '## Heading Bold text 2. Not a new result' });
  });

  it.each([
    [401, 'Unauthorized: missing or invalid API key.', /^Tavily search failed: 401 the service rejected the server credentials \(Unauthorized: missing or invalid API key\.\); web search is misconfigured/],
    [429, 'Your request has been blocked due to excessive requests.', /^Tavily search failed: 429 rate limited \(Your request has been blocked due to excessive requests\.\); try again later or narrow the query$/],
    [500, 'Internal Server Error', /^Tavily search failed: 500 the search service is having problems \(Internal Server Error\); try again in a moment$/],
  ])('turns HTTP %i into an error the model can act on, without the key', async (status, detail, message) => {
    const server = await serve((_request, response) => {
      sendJson(response, status, { detail: { error: detail } });
    });
    const error = await failure(search(server));
    expect(error.message).toMatch(message);
    expect(everythingVisibleAbout(error)).not.toContain(API_KEY);
  });

  it('reads 432 as the plan limit and 400 as a query to rephrase', async () => {
    const plan = await serve((_request, response) => {
      sendJson(response, 432, { detail: { error: 'This request exceeds your plan\'s set usage limit.' } });
    });
    const planError = await failure(search(plan));
    expect(planError.reason).toBe('quota');
    expect(planError.message).toContain('432 the search plan limit is reached');

    const tooLong = await serve((_request, response) => {
      sendJson(response, 400, { detail: { error: 'Query is too long. Max query length is 400 characters.' } });
    });
    expect((await failure(search(tooLong))).message).toBe(
      'Tavily search failed: 400 the service rejected the query (Query is too long. Max query length is 400 characters.); rephrase it as a shorter query of plain keywords',
    );
  });

  it('redacts the key when an error echoes it', async () => {
    const server = await serve((request, response) => {
      sendJson(response, 401, { detail: { error: `Invalid key: ${String(request.headers['authorization'])}` } });
    });
    const error = await failure(search(server));
    expect(error.message).toContain('Invalid key: Bearer [redacted]');
    expect(everythingVisibleAbout(error)).not.toContain(API_KEY);
  });

  it('rejects results without a URL string', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 200, tavilyAnswer([{ title: 'No link', content: 'x', score: 0.2 }]));
    });
    expect((await failure(search(server))).message).toBe(
      'Tavily search failed: the service answered in an unexpected format (results[0].url: expected string, received undefined); try again later',
    );
  });
});
