/** One URL fetched and turned into text the model can read; what the cache keeps. */
export interface FetchedPage {
  /** The URL as asked for. */
  readonly requestedUrl: string;
  /** Where the content came from, after redirects. */
  readonly url: string;
  readonly status: number;
  /** `type/subtype` as the server declared it, or `unknown`. */
  readonly mediaType: string;
  readonly kind: 'html' | 'json' | 'text' | 'binary';
  readonly title: string | undefined;
  /** Markdown for HTML, indented JSON, the text itself, or a description of binary content. */
  readonly text: string;
  /** Body size in bytes, decoded. */
  readonly bytes: number;
  /** The body passed the byte cap and was cut there. */
  readonly truncated: boolean;
  /** When it was fetched (ISO 8601). */
  readonly fetchedAt: string;
}
