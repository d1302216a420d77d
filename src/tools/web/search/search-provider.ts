/** One web search hit, already cleaned: plain-text title and snippet, an http(s) URL. */
export interface SearchResult {
  readonly title: string;
  readonly url: string;
  readonly snippet: string;
  /** `YYYY-MM-DD` when the provider gave a parseable date, else its own wording ("3 days ago"). */
  readonly publishedAt?: string;
}

/** What a provider is asked for. */
export interface SearchRequest {
  readonly query: string;
  /** The most results wanted (1–20); a provider may return fewer. */
  readonly limit: number;
  /** The turn's signal: a provider stops its request when it fires. */
  readonly signal: AbortSignal;
}

/**
 * A web search backend. `search` resolves with ranked results (best first), or rejects with
 * an `Error` whose message the model can act on and which never contains a credential.
 */
export interface SearchProvider {
  /** Stable name for logs and details: `searxng`, `brave`, `tavily`. */
  readonly name: string;
  search(request: SearchRequest): Promise<SearchResult[]>;
}
