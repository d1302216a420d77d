import type { Config } from '../../../config/config.js';
import { createBraveProvider } from './brave-provider.js';
import { createSearxngProvider } from './searxng-provider.js';
import type { SearchProvider } from './search-provider.js';
import { createTavilyProvider } from './tavily-provider.js';

/** The configured search backend, or undefined when none is (then `web_search` is not offered). */
export function createSearchProvider(options: {
  settings: Config['web']['search'];
  fetch?: typeof fetch;
}): SearchProvider | undefined {
  const { settings } = options;
  const transport = options.fetch === undefined ? {} : { fetch: options.fetch };
  switch (settings?.provider) {
    case undefined:
      return undefined;
    case 'searxng':
      return createSearxngProvider({ baseUrl: settings.baseUrl, ...transport });
    case 'brave':
      return createBraveProvider({ baseUrl: settings.baseUrl, apiKey: settings.apiKey, ...transport });
    case 'tavily':
      return createTavilyProvider({ baseUrl: settings.baseUrl, apiKey: settings.apiKey, ...transport });
  }
}
