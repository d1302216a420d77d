import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { createSearchProvider } from '../../../src/tools/web/search/create-search-provider.js';
import { braveAnswer } from './brave-fixtures.js';
import { searxngAnswer } from './searxng-fixtures.js';
import { pathOf, sendJson, startLoopbackServer, type LoopbackServer } from './start-loopback-server.js';
import { tavilyAnswer } from './tavily-fixtures.js';

const servers: LoopbackServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** One loopback server that answers as whichever provider the request looks like. */
async function anyProviderServer(): Promise<LoopbackServer> {
  const server = await startLoopbackServer((request, response) => {
    if (request.method === 'POST') sendJson(response, 200, tavilyAnswer());
    else if (pathOf(request) === '/res/v1/web/search') sendJson(response, 200, braveAnswer());
    else sendJson(response, 200, searxngAnswer());
  });
  servers.push(server);
  return server;
}

describe('createSearchProvider', () => {
  it('offers no provider when none is configured', () => {
    expect(createSearchProvider({ settings: loadConfig({}).web.search })).toBeUndefined();
  });

  it.each([
    ['searxng', (baseUrl: string) => ({ WEB_SEARCH_PROVIDER: 'searxng', SEARXNG_URL: baseUrl }), '/search', 'GET'],
    ['brave', (baseUrl: string) => ({ WEB_SEARCH_PROVIDER: 'brave', BRAVE_API_KEY: 'brave-key', BRAVE_BASE_URL: baseUrl }), '/res/v1/web/search', 'GET'],
    ['tavily', (baseUrl: string) => ({ WEB_SEARCH_PROVIDER: 'tavily', TAVILY_API_KEY: 'tavily-key', TAVILY_BASE_URL: baseUrl }), '/search', 'POST'],
  ])('builds the %s provider from the loaded configuration', async (name, environment, path, method) => {
    const server = await anyProviderServer();
    const provider = createSearchProvider({ settings: loadConfig(environment(server.baseUrl)).web.search });
    expect(provider?.name).toBe(name);

    const results = await provider!.search({ query: 'bun vs node', limit: 2, signal: new AbortController().signal });
    expect(results.length).toBeGreaterThan(0);
    expect(server.requests[0]?.method).toBe(method);
    expect(pathOf(server.requests[0]!)).toBe(path);
  });
});
