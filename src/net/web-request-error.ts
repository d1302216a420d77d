/** What went wrong with a guarded request, for callers that react differently to each. */
export type WebRequestFailure =
  /** The URL itself is not allowed: scheme, credentials, malformed. */
  | 'refused-url'
  /** The host is, or resolves to, an address that is not on the public internet. */
  | 'refused-address'
  | 'too-many-redirects'
  | 'timeout'
  | 'aborted'
  | 'dns'
  | 'network'
  | 'decode';

/**
 * A guarded request that did not produce a response. The message is written for the model
 * (and the person reading the log): it says what was refused or failed and why.
 */
export class WebRequestError extends Error {
  readonly failure: WebRequestFailure;

  constructor(failure: WebRequestFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WebRequestError';
    this.failure = failure;
  }
}
