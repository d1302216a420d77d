import { z } from 'zod';
import { cleanSearchResults } from './clean-search-result.js';
import { MISCONFIGURED_ADVICE, type FailureExplanation, type HttpFailure } from './explain-http-failure.js';
import { htmlToText } from './html-to-text.js';
import { joinEndpoint } from './join-endpoint.js';
import { requestSearchJson } from './request-search-json.js';
import { SearchProviderError } from './search-provider-error.js';
import type { SearchProvider, SearchResult } from './search-provider.js';

export interface SearxngProviderOptions {
  /** The instance's root, e.g. `http://searxng:8080` (a path prefix is kept). */
  readonly baseUrl: string;
  readonly timeoutMs?: number;
  readonly maxResponseBytes?: number;
  readonly fetch?: typeof fetch;
}

// SearXNG serialises its result objects whole; only what is mapped is checked. `url` may be
// null on some result types, `publishedDate` is an ISO timestamp or null.
const searxngResponseSchema = z.object({
  results: z.array(
    z.object({
      url: z.string().nullish(),
      title: z.string().nullish(),
      content: z.string().nullish(),
      publishedDate: z.string().nullish(),
    }),
  ),
  // `[engine, message]` pairs; read loosely, it only improves a message.
  unresponsive_engines: z.array(z.unknown()).optional().catch(undefined),
});

/**
 * A SearXNG instance's Search API: `GET {baseUrl}/search?q=…&format=json`. The instance must
 * list `json` under `search.formats` in its settings.yml, or it answers 403. SearXNG has no
 * result-count parameter: its first page (usually 10–30 merged results) is cut to `limit`.
 */
export function createSearxngProvider(options: SearxngProviderOptions): SearchProvider {
  const endpoint = joinEndpoint(options.baseUrl, 'search');
  return {
    name: 'searxng',
    async search({ query, limit, signal }): Promise<SearchResult[]> {
      const url = new URL(endpoint);
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      const answer = await requestSearchJson({
        provider: 'searxng',
        label: 'SearXNG',
        url,
        method: 'GET',
        // `text/html` stays acceptable: an instance with its bot limiter on refuses
        // requests whose Accept header leaves it out.
        headers: { Accept: 'application/json, text/html;q=0.1' },
        signal,
        timeoutMs: options.timeoutMs,
        maxResponseBytes: options.maxResponseBytes,
        schema: searxngResponseSchema,
        secrets: [],
        explainFailure: explainSearxngFailure,
        fetch: options.fetch,
      });

      const results = cleanSearchResults(
        answer.results.map((hit) => ({ title: hit.title, url: hit.url, snippet: hit.content, publishedAt: hit.publishedDate })),
        limit,
      );
      if (results.length === 0) throwIfEnginesFailed(answer.unresponsive_engines);
      return results;
    },
  };
}

function explainSearxngFailure(failure: HttpFailure): FailureExplanation | undefined {
  if (failure.status === 403) {
    return { reason: 'credentials', summary: 'the instance refused JSON output (json is not enabled under search.formats)', advice: MISCONFIGURED_ADVICE };
  }
  if (failure.status === 429) {
    return { reason: 'rate_limited', summary: "rate limited by the instance's bot limiter", advice: 'try again later or narrow the query' };
  }
  return undefined;
}

/**
 * SearXNG answers 200 with no results both when nothing matched and when its engines
 * failed; only `unresponsive_engines` tells them apart, and the model should know which.
 */
function throwIfEnginesFailed(unresponsive: readonly unknown[] | undefined): void {
  if (unresponsive === undefined || unresponsive.length === 0) return;
  const named = unresponsive.slice(0, 5).map(describeUnresponsiveEngine).filter((text) => text !== '');
  const which = named.length === 0 ? '' : ` (${named.join(', ')})`;
  throw new SearchProviderError({
    provider: 'searxng',
    reason: 'unavailable',
    message: `SearXNG search failed: no results, and ${String(unresponsive.length)} of its search engines did not answer${which}; try again in a moment`,
  });
}

function describeUnresponsiveEngine(entry: unknown): string {
  if (!Array.isArray(entry)) return '';
  const [engine, problem] = entry.map((part) => (typeof part === 'string' ? htmlToText(part) : ''));
  if (engine === undefined || engine === '') return '';
  const text = problem === undefined || problem === '' ? engine : `${engine}: ${problem}`;
  return text.length <= 60 ? text : `${text.slice(0, 59)}…`;
}
