import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { isJsonObject } from '../json.js';
import { ModelError } from './model-client.js';
import { isRetryableStatus } from './model-retry-policy.js';

/** A failed attempt: the error to surface, and whether another attempt may succeed. */
export interface ModelFailure {
  readonly error: ModelError;
  readonly retryable: boolean;
  /** The failed HTTP response's headers (for `retry-after`), when there was one. */
  readonly headers?: Headers | undefined;
}

export interface ClassifyModelFailureOptions {
  /** True once any assistant text reached the caller: from then on nothing is retried. */
  readonly outputForwarded: boolean;
  /** Removes secrets from text that may echo them (the provider's own messages). */
  readonly redact: (text: string) => string;
}

/**
 * Sorts what the SDK or the socket threw into a `ModelFailure`. HTTP errors are retried for
 * 408/409/429/5xx; connection errors and streams that break are retried only while no output
 * has reached the caller (a retry would otherwise repeat text the user already saw).
 */
export function classifyModelFailure(error: unknown, options: ClassifyModelFailureOptions): ModelFailure {
  const { outputForwarded, redact } = options;
  if (error instanceof APIConnectionTimeoutError) {
    return { error: new ModelError('the model request timed out before the provider answered', { cause: error }), retryable: !outputForwarded };
  }
  if (error instanceof APIConnectionError) {
    const causes = describeCauses(error.cause);
    if (REDIRECT_REFUSED.test(causes)) {
      // Requests are sent with `redirect: 'error'` (see postResponsesStream): asking again gets the same redirect.
      const message = `the model provider answered with a redirect, which is not followed: point the base URL at the Responses endpoint itself (${redact(causes)})`;
      return { error: new ModelError(message, { cause: error }), retryable: false };
    }
    const message = `could not reach the model provider: ${redact(causes)}`;
    return { error: new ModelError(message, { cause: error }), retryable: !outputForwarded };
  }
  if (isApiError(error) && typeof error.status === 'number') {
    const status = error.status;
    const providerSaysNo = error.headers?.get('x-should-retry') === 'false';
    const message = `the model provider answered HTTP ${status}: ${redact(providerMessage(error))}`;
    return {
      error: new ModelError(message, { status, cause: error }),
      retryable: isRetryableStatus(status) && !providerSaysNo && !outputForwarded,
      headers: error.headers,
    };
  }
  if (isApiError(error)) {
    // A status-less APIError is an `error` object inside the event stream itself.
    return { error: new ModelError(`the model stream reported an error: ${redact(providerMessage(error))}`, { cause: error }), retryable: false };
  }
  const what = error instanceof SyntaxError ? 'sent malformed data' : 'broke';
  const when = outputForwarded ? ' after output had started' : '';
  const message = `the model stream ${what}${when}: ${redact(describeCauses(error))}`;
  return { error: new ModelError(message, { cause: error }), retryable: !outputForwarded };
}

/** What fetch says of a redirect answer to a request sent with `redirect: 'error'` (undici's words, on Node 22, 24 and 26). */
const REDIRECT_REFUSED = /unexpected redirect/i;

/** Narrows to `APIError` with its declared field types (`instanceof` yields `any` generics). */
function isApiError(error: unknown): error is APIError {
  return error instanceof APIError;
}

/** The provider's own words: `error.message` of the JSON body, else the SDK's text without its status prefix. */
function providerMessage(error: APIError): string {
  const body = error.error;
  if (isJsonObject(body) && typeof body['message'] === 'string' && body['message'] !== '') return body['message'];
  return error.message.replace(/^\d{3} /, '');
}

/** "fetch failed: connect ECONNREFUSED 127.0.0.1:9" — each message along the `cause` chain. */
function describeCauses(error: unknown): string {
  const messages: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    if (current.message !== '' && !messages.includes(current.message)) messages.push(current.message);
    current = current.cause;
  }
  return messages.length > 0 ? messages.join(': ') : String(error);
}
