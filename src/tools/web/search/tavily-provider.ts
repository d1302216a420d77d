import { z } from 'zod';
import { cleanSearchResults } from './clean-search-result.js';
import type { FailureExplanation, HttpFailure } from './explain-http-failure.js';
import { joinEndpoint } from './join-endpoint.js';
import { requestSearchJson, type ErrorBodyDetail } from './request-search-json.js';
import type { SearchProvider, SearchResult } from './search-provider.js';

export interface TavilyProviderOptions {
  /** `https://api.tavily.com` or a proxy in front of it. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`. */
  readonly apiKey: string;
  readonly timeoutMs?: number;
  readonly maxResponseBytes?: number;
  readonly fetch?: typeof fetch;
}

// Only what is mapped is checked. `published_date` comes with `topic: "news"` results.
const tavilyResponseSchema = z.object({
  results: z.array(
    z.object({
      title: z.string().nullish(),
      url: z.string(),
      content: z.string().nullish(),
      published_date: z.string().nullish(),
    }),
  ),
});

// Tavily's error body: `{ "detail": { "error": "…" } }`.
const tavilyErrorSchema = z.object({ detail: z.object({ error: z.string() }) });

/**
 * Tavily's Search API: `POST {baseUrl}/search` with a JSON body (`query`, `max_results`, …)
 * and `Authorization: Bearer <key>`; results in `results[]`, best first.
 */
export function createTavilyProvider(options: TavilyProviderOptions): SearchProvider {
  const endpoint = joinEndpoint(options.baseUrl, 'search');
  return {
    name: 'tavily',
    async search({ query, limit, signal }): Promise<SearchResult[]> {
      const answer = await requestSearchJson({
        provider: 'tavily',
        label: 'Tavily',
        url: endpoint,
        method: 'POST',
        headers: {
          Accept: 'application/json',
          'Content-Type': 'application/json',
          Authorization: `Bearer ${options.apiKey}`,
        },
        // Snippets only: no generated answer, page bodies or images to pay for and discard.
        body: JSON.stringify({
          query,
          max_results: Math.min(Math.max(limit, 1), 20),
          search_depth: 'basic',
          include_answer: false,
          include_raw_content: false,
          include_images: false,
        }),
        signal,
        timeoutMs: options.timeoutMs,
        maxResponseBytes: options.maxResponseBytes,
        schema: tavilyResponseSchema,
        secrets: [options.apiKey],
        readErrorBody: readTavilyError,
        explainFailure: explainTavilyFailure,
        fetch: options.fetch,
      });
      return cleanSearchResults(
        (answer.results).map((hit) => ({ title: hit.title, url: hit.url, snippet: hit.content, publishedAt: hit.published_date })),
        limit,
      );
    },
  };
}

function readTavilyError(body: unknown): ErrorBodyDetail | undefined {
  const parsed = tavilyErrorSchema.safeParse(body);
  return parsed.success ? { detail: parsed.data.detail.error } : undefined;
}

function explainTavilyFailure(failure: HttpFailure): FailureExplanation | undefined {
  // Tavily's own codes: 432 is the plan's limit, 433 the pay-as-you-go limit.
  if (failure.status === 432 || failure.status === 433) {
    return { reason: 'quota', summary: 'the search plan limit is reached', advice: 'web search is unavailable for now; continue without it' };
  }
  return undefined;
}
