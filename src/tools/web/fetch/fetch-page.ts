import type { Logger } from 'pino';
import type { Clock } from '../../../clock.js';
import { guardedGet } from '../../../net/guarded-get.js';
import type { HostLookup } from '../../../net/guarded-lookup.js';
import { WebRequestError, type WebRequestFailure } from '../../../net/web-request-error.js';
import type { FetchedPage } from './fetched-page.js';
import { renderResponse } from './render-response.js';
import type { WebFetchCache } from './web-fetch-cache.js';
import type { WebFetchSettings } from './web-fetch-settings.js';

export type FetchOutcome =
  | { readonly ok: true; readonly url: string; readonly page: FetchedPage; readonly cached: boolean; readonly ageMs: number }
  | { readonly ok: false; readonly url: string; readonly failure: WebRequestFailure | 'http-status' | 'unexpected'; readonly message: string };

const ACCEPT = 'text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.9,*/*;q=0.5';

/**
 * One URL, from the cache when it was fetched in the last 15 minutes, otherwise through the
 * guarded GET. Never throws: a failure is an outcome, so one bad URL does not sink the rest.
 */
export async function fetchPage(options: {
  readonly url: string;
  readonly settings: WebFetchSettings;
  readonly cache: WebFetchCache;
  readonly clock: Clock;
  readonly signal: AbortSignal;
  readonly logger: Logger;
  readonly lookup: HostLookup | undefined;
}): Promise<FetchOutcome> {
  const { url, settings } = options;
  const hit = options.cache.get(url);
  if (hit !== undefined) return { ok: true, url, page: hit.page, cached: true, ageMs: hit.ageMs };
  try {
    const response = await guardedGet({
      url,
      allowHosts: settings.allowHosts,
      timeoutMs: settings.fetchTimeoutMs,
      maxBytes: settings.fetchMaxBytes,
      maxRedirects: settings.maxRedirects,
      signal: options.signal,
      accept: ACCEPT,
      ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
    });
    if (response.status < 200 || response.status > 299) {
      const reason = response.statusText === '' ? '' : ` ${response.statusText}`;
      return { ok: false, url, failure: 'http-status', message: `the server answered HTTP ${response.status}${reason}` };
    }
    const page = renderResponse({ requestedUrl: url, response, fetchedAt: options.clock.now() });
    options.cache.set(url, page);
    return { ok: true, url, page, cached: false, ageMs: 0 };
  } catch (error) {
    if (error instanceof WebRequestError) {
      if (error.failure === 'refused-address' || error.failure === 'refused-url') {
        options.logger.warn({ url: withoutCredentials(url), failure: error.failure, reason: error.message }, 'web_fetch refused a URL');
      }
      return { ok: false, url, failure: error.failure, message: error.message };
    }
    options.logger.error({ url: withoutCredentials(url), err: error }, 'web_fetch failed unexpectedly');
    return { ok: false, url, failure: 'unexpected', message: 'the page could not be processed' };
  }
}

/** Credentials a model put in a URL are refused, and kept out of the logs too. */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.href;
  } catch {
    return '(unparseable URL)';
  }
}
