import { z } from 'zod';
import { cleanSearchResults } from './clean-search-result.js';
import { MISCONFIGURED_ADVICE, type FailureExplanation, type HttpFailure } from './explain-http-failure.js';
import { joinEndpoint } from './join-endpoint.js';
import { requestSearchJson, type ErrorBodyDetail } from './request-search-json.js';
import type { SearchProvider, SearchResult } from './search-provider.js';

export interface BraveProviderOptions {
  /** `https://api.search.brave.com` or a proxy in front of it. */
  readonly baseUrl: string;
  /** The subscription token, sent as `X-Subscription-Token`. */
  readonly apiKey: string;
  readonly timeoutMs?: number;
  readonly maxResponseBytes?: number;
  readonly fetch?: typeof fetch;
}

// Only what is mapped is checked; Brave's answer carries many more sections and fields.
const braveResponseSchema = z.object({
  web: z
    .object({
      results: z.array(
        z.object({
          title: z.string(),
          url: z.string(),
          description: z.string().nullish(),
          /** ISO timestamp of the page, when Brave knows it. */
          page_age: z.string().nullish(),
          /** Brave's display form of the date ("August 28, 2024", "3 days ago"). */
          age: z.string().nullish(),
        }),
      ),
    })
    .optional(),
});

const braveErrorSchema = z.object({
  error: z.object({ code: z.string().optional(), detail: z.string().optional() }).optional(),
  errors: z.array(z.object({ code: z.string().optional(), detail: z.string().optional() })).optional(),
});

/**
 * Brave Search's Web Search API: `GET {baseUrl}/res/v1/web/search?q=…&count=…` with the key
 * in `X-Subscription-Token`, results in `web.results[]`.
 */
export function createBraveProvider(options: BraveProviderOptions): SearchProvider {
  const endpoint = joinEndpoint(options.baseUrl, 'res/v1/web/search');
  return {
    name: 'brave',
    async search({ query, limit, signal }): Promise<SearchResult[]> {
      const url = new URL(endpoint);
      url.searchParams.set('q', query);
      url.searchParams.set('count', String(Math.min(Math.max(limit, 1), 20)));
      // Asks for snippets without `<strong>` highlight markers (they are stripped regardless).
      url.searchParams.set('text_decorations', 'false');
      const answer = await requestSearchJson({
        provider: 'brave',
        label: 'Brave',
        url,
        method: 'GET',
        headers: { Accept: 'application/json', 'X-Subscription-Token': options.apiKey },
        signal,
        timeoutMs: options.timeoutMs,
        maxResponseBytes: options.maxResponseBytes,
        schema: braveResponseSchema,
        secrets: [options.apiKey],
        readErrorBody: readBraveError,
        explainFailure: explainBraveFailure,
        fetch: options.fetch,
      });
      return cleanSearchResults(
        (answer.web?.results ?? []).map((hit) => ({
          title: hit.title,
          url: hit.url,
          snippet: hit.description,
          publishedAt: hit.page_age ?? hit.age,
        })),
        limit,
      );
    },
  };
}

/** Brave documents `{ type: "ErrorResponse", error: {…} }`; its examples show `errors: [{…}]`. */
function readBraveError(body: unknown): ErrorBodyDetail | undefined {
  const parsed = braveErrorSchema.safeParse(body);
  if (!parsed.success) return undefined;
  const error = parsed.data.error ?? parsed.data.errors?.[0];
  if (error === undefined) return undefined;
  return {
    ...(error.code === undefined ? {} : { code: error.code }),
    ...(error.detail === undefined ? {} : { detail: error.detail }),
  };
}

function explainBraveFailure(failure: HttpFailure): FailureExplanation | undefined {
  // An invalid token is a 422 at Brave, not a 401.
  if (failure.code === 'SUBSCRIPTION_TOKEN_INVALID' || failure.code === 'SUBSCRIPTION_NOT_FOUND') {
    return { reason: 'credentials', summary: 'the service rejected the server credentials', advice: MISCONFIGURED_ADVICE };
  }
  if (failure.code === 'QUOTA_LIMITED') {
    return { reason: 'quota', summary: 'the monthly search quota is used up', advice: 'web search is unavailable for now; continue without it' };
  }
  return undefined;
}
