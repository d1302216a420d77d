import type { SearchFailureReason } from './search-provider-error.js';

/** A non-2xx answer from a search service, with what its error body said. */
export interface HttpFailure {
  readonly status: number;
  /** The provider's machine code, e.g. Brave's `RATE_LIMITED` or `QUOTA_LIMITED`. */
  readonly code?: string;
  /** The provider's human explanation, already plain text, redacted and short. */
  readonly detail?: string;
  readonly retryAfterSeconds?: number;
}

/** What went wrong in a few words, and what the model can do about it. */
export interface FailureExplanation {
  readonly reason: SearchFailureReason;
  readonly summary: string;
  readonly advice: string;
}

/** Advice for failures only an operator can fix. */
export const MISCONFIGURED_ADVICE =
  'web search is misconfigured on this server, so retrying or rewording will not help; continue without it';

/** The usual meaning of an HTTP status from a search API; providers refine it where theirs differ. */
export function explainHttpFailure(failure: HttpFailure): FailureExplanation {
  const { status } = failure;
  if (status === 401 || status === 403) {
    return { reason: 'credentials', summary: 'the service rejected the server credentials', advice: MISCONFIGURED_ADVICE };
  }
  if (status === 402) {
    return { reason: 'quota', summary: 'the search plan has run out', advice: 'web search is unavailable for now; continue without it' };
  }
  if (status === 429) {
    const wait = failure.retryAfterSeconds === undefined ? 'try again later' : `wait ${String(failure.retryAfterSeconds)} s before trying again`;
    return { reason: 'rate_limited', summary: 'rate limited', advice: `${wait} or narrow the query` };
  }
  if (status === 404) {
    return { reason: 'unavailable', summary: 'the search endpoint was not found', advice: MISCONFIGURED_ADVICE };
  }
  if (status >= 300 && status < 400) {
    return { reason: 'unavailable', summary: 'the search endpoint redirected elsewhere', advice: MISCONFIGURED_ADVICE };
  }
  if (status === 400 || status === 413 || status === 414 || status === 422) {
    return { reason: 'rejected_query', summary: 'the service rejected the query', advice: 'rephrase it as a shorter query of plain keywords' };
  }
  if (status === 408 || status >= 500) {
    return { reason: 'unavailable', summary: 'the search service is having problems', advice: 'try again in a moment' };
  }
  return { reason: 'unavailable', summary: 'unexpected answer from the search service', advice: 'try again later' };
}
