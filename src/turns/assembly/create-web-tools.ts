import type { WorkerAgentTool } from '../../tools/define-worker-tool.js';
import { createWebFetchTool } from '../../tools/web/fetch/create-web-fetch-tool.js';
import { createWebSearchTool } from '../../tools/web/search/web-search-tool.js';
import type { ToolServices } from './tool-services.js';
import type { UnavailableSource } from './tool-source.js';

/**
 * The web tools this server can serve: `web_fetch` always (behind its SSRF guard),
 * `web_search` only with a configured provider. Shared by
 * the main turn and workflow tasks, which both get "the web tools the server has".
 */
export function createWebTools(options: { readonly agentId: string; readonly home: string; readonly services: ToolServices }): {
  tools: WorkerAgentTool[];
  unavailable: UnavailableSource[];
} {
  const { services, agentId, home } = options;
  const { webFetch } = services;
  const tools: WorkerAgentTool[] = [
    createWebFetchTool({
      agentId,
      home,
      // Saved texts belong to the sandbox user, like what the file tools write.
      owner: services.sandbox?.homeOwner,
      settings: webFetch.settings,
      cache: webFetch.cacheFor(agentId),
      clock: services.clock,
      ...(webFetch.lookup === undefined ? {} : { lookup: webFetch.lookup }),
    }),
  ];
  const unavailable: UnavailableSource[] = [];
  if (services.searchProvider === undefined) {
    unavailable.push({ source: 'web.web_search', reason: 'no web search provider is configured (WEB_SEARCH_PROVIDER)' });
  } else {
    tools.push(createWebSearchTool({ provider: services.searchProvider }));
  }
  return { tools, unavailable };
}
