import type { Clock } from '../../../clock.js';
import type { FetchedPage } from './fetched-page.js';

export const WEB_FETCH_CACHE_TTL_MS = 15 * 60 * 1000;

export interface WebFetchCacheOptions {
  readonly clock: Clock;
  /** How long a page is served without asking the network again; 15 minutes. */
  readonly ttlMs?: number;
  /** Pages kept at most; the least recently used go first. */
  readonly maxEntries?: number;
  /** Text kept at most, in UTF-8 bytes, over all pages. */
  readonly maxBytes?: number;
}

export interface CachedPage {
  readonly page: FetchedPage;
  /** How long ago it was fetched. */
  readonly ageMs: number;
}

interface Entry {
  readonly page: FetchedPage;
  readonly storedAtMs: number;
  readonly size: number;
}

/**
 * The pages one agent fetched in the last 15 minutes, so asking for the same URL again
 * (the model often does, across iterations) costs no network and returns the same text.
 * One instance per agent, made by whoever assembles the agent's tools; bounded in entries
 * and bytes, least recently used out first. Time comes from the injected clock.
 */
export class WebFetchCache {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  // Map iteration order is insertion order: re-inserting on use keeps it least-recent first.
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  constructor(options: WebFetchCacheOptions) {
    this.#clock = options.clock;
    this.#ttlMs = options.ttlMs ?? WEB_FETCH_CACHE_TTL_MS;
    this.#maxEntries = options.maxEntries ?? 64;
    this.#maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  }

  /** The page fetched from this URL within the TTL, if any. */
  get(url: string): CachedPage | undefined {
    const key = cacheKey(url);
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    const ageMs = this.#clock.monotonicMs() - entry.storedAtMs;
    if (ageMs >= this.#ttlMs || ageMs < 0) {
      this.#delete(key, entry);
      return undefined;
    }
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return { page: entry.page, ageMs };
  }

  /** Keeps a page for the URL it was asked for; one too large for the cache is not kept. */
  set(url: string, page: FetchedPage): void {
    const key = cacheKey(url);
    const previous = this.#entries.get(key);
    if (previous !== undefined) this.#delete(key, previous);
    const size = Buffer.byteLength(page.text) + Buffer.byteLength(page.url) + Buffer.byteLength(page.title ?? '');
    if (size > this.#maxBytes) return;
    this.#entries.set(key, { page, storedAtMs: this.#clock.monotonicMs(), size });
    this.#bytes += size;
    for (const [oldestKey, oldest] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      this.#delete(oldestKey, oldest);
    }
  }

  get size(): number {
    return this.#entries.size;
  }

  #delete(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#bytes -= entry.size;
  }
}

/** The fragment never reaches the server, so `…#a` and `…#b` are the same fetch. */
function cacheKey(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.hash = '';
    return parsed.href;
  } catch {
    return url;
  }
}
