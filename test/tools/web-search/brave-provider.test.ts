import { describe, expect, it } from 'vitest';
import { createBraveProvider } from '../../../src/tools/web/search/brave-provider.js';
import { braveAnswer, braveError, braveResult } from './brave-fixtures.js';
import { everythingVisibleAbout, pathOf, queryOf, sendJson, type LoopbackServer, useLoopbackServers, failure } from './start-loopback-server.js';

const API_KEY = 'BSA-test-key-0123456789abcdef';

const serve = useLoopbackServers();

function search(server: LoopbackServer, options: { query?: string; limit?: number; signal?: AbortSignal; timeoutMs?: number; maxResponseBytes?: number } = {}) {
  const provider = createBraveProvider({
    baseUrl: server.baseUrl,
    apiKey: API_KEY,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.maxResponseBytes === undefined ? {} : { maxResponseBytes: options.maxResponseBytes }),
  });
  return provider.search({ query: options.query ?? 'bun vs node', limit: options.limit ?? 8, signal: options.signal ?? new AbortController().signal });
}

describe('Brave provider', () => {
  it('sends GET /res/v1/web/search with q, count and the subscription token, as Brave documents', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 200, braveAnswer());
    });
    await search(server, { query: 'bun vs node', limit: 5 });

    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.method).toBe('GET');
    expect(pathOf(request!)).toBe('/res/v1/web/search');
    expect(queryOf(request!)).toEqual({ q: 'bun vs node', count: '5', text_decorations: 'false' });
    expect(request?.headers['x-subscription-token']).toBe(API_KEY);
    expect(request?.headers['accept']).toBe('application/json');
    expect(request?.headers['authorization']).toBeUndefined();
  });

  it('maps web.results to plain-text results, dates from page_age, then age', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 200, braveAnswer());
    });
    const results = await search(server);

    expect(results).toEqual([
      {
        title: 'Bun vs Node.js: Which JavaScript runtime is faster?',
        url: 'https://example.com/blog/bun-vs-node',
        snippet: 'Bun is a drop-in replacement for Node.js & starts 4× faster.',
        publishedAt: '2024-05-01',
      },
      {
        title: 'Bun — A fast all-in-one JavaScript runtime',
        url: 'https://bun.sh/',
        snippet: 'Develop, test, run, and bundle JavaScript & TypeScript projects—all with Bun.',
      },
      {
        title: 'Is Bun ready for production? : r/node',
        url: 'https://www.reddit.com/r/node/comments/16cb2x1/is_bun_ready_for_production/',
        snippet: 'A thread about running Bun in production.',
        publishedAt: '3 days ago',
      },
    ]);
  });

  it('strips <strong> highlights and other markup even when Brave sends them', async () => {
    const server = await serve((_request, response) => {
      sendJson(
        response,
        200,
        braveAnswer([
          braveResult({
            title: '<strong>Bun</strong> &lt;3 <em>speed</em>',
            url: 'https://example.com/a',
            description: 'Fast <strong>bun</strong><script>alert(1)</script> &quot;runtime&quot;&nbsp;&#x1F680; <img src=x onerror=alert(1)>done',
          }),
        ]),
      );
    });
    const [result] = await search(server);
    expect(result?.title).toBe('Bun <3 speed');
    expect(result?.snippet).toBe('Fast bun "runtime" 🚀 done');
  });

  it('asks for at most the limit and returns no more than it', async () => {
    const many = Array.from({ length: 6 }, (_, index) => braveResult({ title: `Result ${String(index)}`, url: `https://example.com/${String(index)}` }));
    const server = await serve((_request, response) => {
      sendJson(response, 200, braveAnswer(many));
    });
    const results = await search(server, { limit: 2 });
    expect(queryOf(server.requests[0]!)['count']).toBe('2');
    expect(results.map((result) => result.title)).toEqual(['Result 0', 'Result 1']);
  });

  it('returns nothing, not an error, when Brave has no web section', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 200, { type: 'search', query: { original: 'zzqv' } });
    });
    expect(await search(server)).toEqual([]);
  });

  it('drops results whose URL the model could not open', async () => {
    const server = await serve((_request, response) => {
      sendJson(
        response,
        200,
        braveAnswer([
          { ...braveResult({ title: 'Script', url: 'https://example.com/x' }), url: 'javascript:alert(1)' },
          { ...braveResult({ title: 'Data', url: 'https://example.com/x' }), url: 'data:text/html,hi' },
          { ...braveResult({ title: 'Creds', url: 'https://example.com/x' }), url: 'https://user:pass@example.com/' },
          braveResult({ title: 'Huge', url: `https://example.com/${'a'.repeat(3000)}` }),
          braveResult({ title: 'Fine', url: 'https://example.com/fine' }),
        ]),
      );
    });
    expect((await search(server)).map((result) => result.title)).toEqual(['Fine']);
  });

  it.each([
    [401, braveError(401, 'UNAUTHORIZED', 'Missing or invalid token.'), /^Brave search failed: 401 the service rejected the server credentials \(Missing or invalid token\.\); web search is misconfigured/],
    [429, braveError(429, 'RATE_LIMITED', 'Request rate limit exceeded for plan.'), /^Brave search failed: 429 rate limited \(Request rate limit exceeded for plan\.\); try again later or narrow the query$/],
    [500, { type: 'ErrorResponse', error: { code: 'INTERNAL', detail: 'Something broke.' } }, /^Brave search failed: 500 the search service is having problems \(Something broke\.\); try again in a moment$/],
  ])('turns HTTP %i into an error the model can act on, without the key', async (status, body, message) => {
    const server = await serve((_request, response) => {
      sendJson(response, status, body);
    });
    const error = await failure(search(server));
    expect(error.message).toMatch(message);
    expect(error.status).toBe(status);
    expect(everythingVisibleAbout(error)).not.toContain(API_KEY);
  });

  it('reads an invalid token (422 SUBSCRIPTION_TOKEN_INVALID) as a configuration problem', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 422, {
        type: 'ErrorResponse',
        errors: [{ id: 'x', code: 'SUBSCRIPTION_TOKEN_INVALID', detail: 'The provided subscription token is invalid.', status: 422 }],
        time: 1663072993,
      });
    });
    const error = await failure(search(server));
    expect(error.reason).toBe('credentials');
    expect(error.message).toContain('422 the service rejected the server credentials (The provided subscription token is invalid.)');
    expect(error.message).toContain('retrying or rewording will not help');
  });

  it('tells an exhausted quota apart from a rate limit, and passes on Retry-After', async () => {
    const quota = await serve((_request, response) => {
      sendJson(response, 429, braveError(429, 'QUOTA_LIMITED', 'Request quota limit exceeded for plan.'));
    });
    const quotaError = await failure(search(quota));
    expect(quotaError.reason).toBe('quota');
    expect(quotaError.message).toMatch(/the monthly search quota is used up .*continue without it/);

    const rate = await serve((_request, response) => {
      sendJson(response, 429, braveError(429, 'RATE_LIMITED', 'Request rate limit exceeded for plan.'), { 'retry-after': '2' });
    });
    expect((await failure(search(rate))).message).toContain('wait 2 s before trying again or narrow the query');
  });

  it('never shows the key even when the service echoes it in an error', async () => {
    const server = await serve((request, response) => {
      sendJson(response, 401, braveError(401, 'UNAUTHORIZED', `Token ${String(request.headers['x-subscription-token'])} is not valid`));
    });
    const error = await failure(search(server));
    expect(error.message).toContain('Token [redacted] is not valid');
    expect(everythingVisibleAbout(error)).not.toContain(API_KEY);
  });

  it('rejects a body that is not the documented shape, saying where', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 200, { type: 'search', web: { type: 'search', results: [{ title: 42, url: 'https://example.com' }] } });
    });
    const error = await failure(search(server));
    expect(error.reason).toBe('bad_response');
    expect(error.message).toBe('Brave search failed: the service answered in an unexpected format (web.results[0].title: expected string, received number); try again later');
  });

  it('rejects a body that is not JSON', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html><body>Service temporarily unavailable</body></html>');
    });
    expect((await failure(search(server))).message).toBe('Brave search failed: the service answered with something that is not JSON; try again later');
  });

  it('does not follow a redirect, so the key never reaches another host', async () => {
    const elsewhere = await serve((_request, response) => {
      sendJson(response, 200, braveAnswer());
    });
    const server = await serve((_request, response) => {
      response.writeHead(307, { location: `${elsewhere.baseUrl}/res/v1/web/search?q=x` });
      response.end();
    });
    const error = await failure(search(server));
    expect(error.message).toMatch(/^Brave search failed: 307 the search endpoint redirected elsewhere; web search is misconfigured/);
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('keeps a path prefix in the base URL (a proxy in front of Brave)', async () => {
    const server = await serve((_request, response) => {
      sendJson(response, 200, braveAnswer());
    });
    const provider = createBraveProvider({ baseUrl: `${server.baseUrl}/brave/`, apiKey: API_KEY });
    await provider.search({ query: 'q', limit: 1, signal: new AbortController().signal });
    expect(pathOf(server.requests[0]!)).toBe('/brave/res/v1/web/search');
  });
});
