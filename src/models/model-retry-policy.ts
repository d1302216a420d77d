/** First backoff step; each further attempt doubles it. */
const initialDelayMs = 500;
/** The longest computed backoff. */
const maxBackoffMs = 8_000;
/** The longest wait a provider's `retry-after` may impose; beyond it we wait this long. */
export const maxRetryAfterMs = 60_000;

/**
 * Whether an HTTP status is worth another attempt: timeouts (408), conflicts (409), rate
 * limits (429) and server errors. Every other 4xx means the request itself is wrong.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

export interface RetryDelayOptions {
  /** 0 for the wait before the first retry. */
  readonly retryIndex: number;
  /** The failed response's headers, when there was a response. */
  readonly headers?: Headers | undefined;
  /** A number in [0, 1); injectable so tests are deterministic. */
  readonly random: () => number;
  /** Wall-clock milliseconds, for HTTP-date `retry-after` values. */
  readonly now: () => number;
}

/**
 * How long to wait before the next attempt. A provider's `retry-after-ms` or `retry-after`
 * (seconds or an HTTP date) wins, capped at `maxRetryAfterMs`; otherwise exponential
 * backoff with "equal jitter" (half fixed, half random) so that many turns hitting the same
 * rate limit do not retry in lockstep.
 */
export function retryDelayMs(options: RetryDelayOptions): number {
  const requested = requestedDelayMs(options.headers, options.now);
  if (requested !== undefined) return Math.min(Math.max(0, requested), maxRetryAfterMs);
  const backoff = Math.min(maxBackoffMs, initialDelayMs * 2 ** options.retryIndex);
  return Math.round(backoff / 2 + (options.random() * backoff) / 2);
}

function requestedDelayMs(headers: Headers | undefined, now: () => number): number | undefined {
  if (headers === undefined) return undefined;
  const milliseconds = parseNumber(headers.get('retry-after-ms'));
  if (milliseconds !== undefined) return milliseconds;
  const retryAfter = headers.get('retry-after');
  if (retryAfter === null) return undefined;
  const seconds = parseNumber(retryAfter);
  if (seconds !== undefined) return seconds * 1000;
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? undefined : date - now();
}

function parseNumber(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : undefined;
}
