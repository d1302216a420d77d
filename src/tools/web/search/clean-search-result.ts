import { htmlToText } from './html-to-text.js';
import { normalizePublishedAt } from './normalize-published-at.js';
import type { SearchResult } from './search-provider.js';

const MAX_TITLE_CHARS = 200;
const MAX_SNIPPET_CHARS = 800;
/** Longer links are junk or tracking; they would only flood the model's context. */
const MAX_URL_CHARS = 2048;

/** A provider's raw hit, fields as the provider sent them. */
export interface RawSearchHit {
  readonly title: string | null | undefined;
  readonly url: string | null | undefined;
  readonly snippet: string | null | undefined;
  readonly publishedAt?: string | null | undefined;
}

/**
 * Turns a raw hit into a `SearchResult`: title and snippet as one line of plain text each,
 * cut to a readable length; undefined when the URL is missing, not http(s) or absurdly
 * long, since a result the model cannot open or cite is no result.
 */
export function cleanSearchResult(hit: RawSearchHit): SearchResult | undefined {
  const url = httpUrl(hit.url);
  if (url === undefined) return undefined;
  const title = truncate(htmlToText(hit.title ?? ''), MAX_TITLE_CHARS);
  const snippet = truncate(htmlToText(hit.snippet ?? ''), MAX_SNIPPET_CHARS);
  const publishedAt = normalizePublishedAt(hit.publishedAt);
  return { title: title === '' ? new URL(url).hostname : title, url, snippet, ...(publishedAt === undefined ? {} : { publishedAt }) };
}

/** The usable results among a provider's hits, in rank order, at most `limit`. */
export function cleanSearchResults(hits: Iterable<RawSearchHit>, limit: number): SearchResult[] {
  const results: SearchResult[] = [];
  for (const hit of hits) {
    if (results.length >= limit) break;
    const result = cleanSearchResult(hit);
    if (result !== undefined) results.push(result);
  }
  return results;
}

function httpUrl(raw: string | null | undefined): string | undefined {
  if (raw === null || raw === undefined) return undefined;
  const trimmed = raw.trim();
  if (!URL.canParse(trimmed)) return undefined;
  const url = new URL(trimmed);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  // Credentials in a link are never something to show a model or invite it to fetch.
  if (url.username !== '' || url.password !== '') return undefined;
  return url.href.length <= MAX_URL_CHARS ? url.href : undefined;
}

function truncate(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  // Never end on half of a surrogate pair.
  const cut = text.slice(0, maxChars - 1).replace(/[\uD800-\uDBFF]$/, '');
  const lastSpace = cut.lastIndexOf(' ');
  return `${(lastSpace > maxChars * 0.6 ? cut.slice(0, lastSpace) : cut).trimEnd()}…`;
}
