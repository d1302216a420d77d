/** Why a search failed, for logs and for callers that branch on it; the message is for the model. */
export type SearchFailureReason =
  | 'cancelled'
  | 'timeout'
  | 'network'
  | 'credentials'
  | 'rate_limited'
  | 'quota'
  | 'rejected_query'
  | 'unavailable'
  | 'bad_response';

/** A provider failure whose message says what happened and what the model can do about it. */
export class SearchProviderError extends Error {
  readonly provider: string;
  readonly reason: SearchFailureReason;
  readonly status: number | undefined;

  constructor(options: {
    provider: string;
    reason: SearchFailureReason;
    message: string;
    status?: number;
  }) {
    // No `cause`: a low-level error can carry request details, and this error reaches logs.
    super(options.message);
    this.name = 'SearchProviderError';
    this.provider = options.provider;
    this.reason = options.reason;
    this.status = options.status;
  }
}
