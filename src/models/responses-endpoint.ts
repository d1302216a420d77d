import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { SERVICE_USER_AGENT } from '../package-version.js';
import type { EncodedBody } from './encode-responses-request.js';
import { createProviderFetch, providerRequestBody } from './provider-fetch.js';

/**
 * Where a provider's Responses requests go and how: the URL, the headers (made once), and the
 * fetch that sends them. Built once at start-up and shared by every turn.
 */
export interface ResponsesEndpoint {
  /** `<base URL>/responses`. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly fetch: typeof fetch;
}

export function createResponsesEndpoint(options: {
  readonly apiKey: string;
  /** e.g. `https://api.openai.com/v1`; the OpenAI endpoint when absent. */
  readonly baseUrl?: string | undefined;
  /** The fetch to send with (tracing passes `traceparent` on through one); the provider fetch when absent. */
  readonly fetch?: typeof fetch | undefined;
}): ResponsesEndpoint {
  const baseUrl = options.baseUrl ?? 'https://api.openai.com/v1';
  return {
    url: `${baseUrl.endsWith('/') ? baseUrl.slice(0, -1) : baseUrl}/responses`,
    headers: {
      authorization: `Bearer ${options.apiKey}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
      // Ours, not the SDK's: this request is built and sent by our own code (see below), so a
      // provider's logs should name the service that sent it.
      'user-agent': SERVICE_USER_AGENT,
    },
    fetch: options.fetch ?? createProviderFetch(),
  };
}

/**
 * Sends one streaming Responses request and resolves with the provider's answer once its
 * headers are in; the caller reads the event stream (see `providerResponseBody`).
 *
 * This is the one request the service makes of a provider, so it is made here rather than
 * through the SDK client's `post`: per request, that built and merged its headers from six
 * sources and formatted the request for its debug log (even with the log off), about 4% of a
 * turn's CPU in the turn bench. What the SDK's `post` gave our error handling is kept, with
 * its own error classes: a refusal is `APIError.generate(status, body, …)` as the SDK makes it
 * (the body read as JSON when it is JSON), a request that could not be sent is an
 * `APIConnectionError` caused by fetch's error (`APIConnectionTimeoutError` when that says it
 * timed out), and one aborted by `signal` is an `APIUserAbortError`. Retries and timeouts are
 * the model client's (see openai-responses-model.ts).
 */
export async function postResponsesStream(endpoint: ResponsesEndpoint, body: EncodedBody, signal: AbortSignal): Promise<Response> {
  // A function, so that the check after the await is not narrowed away by the one before it.
  const aborted = (): boolean => signal.aborted;
  if (aborted()) throw new APIUserAbortError();
  let response: Response;
  try {
    response = await endpoint.fetch(endpoint.url, { method: 'POST', headers: endpoint.headers, body: providerRequestBody(body), signal, redirect: 'error', duplex: 'half' });
  } catch (error) {
    if (aborted()) throw new APIUserAbortError();
    const cause = error instanceof Error ? error : new Error(String(error));
    if (/timed? ?out/i.test(`${String(cause)}${'cause' in cause ? String(cause.cause) : ''}`)) throw new APIConnectionTimeoutError();
    throw new APIConnectionError({ cause });
  }
  if (response.ok) return response;
  const text = await response.text().catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
  const json = parseJsonObject(text);
  throw APIError.generate(response.status, json, json === undefined ? text : undefined, response.headers);
}

function parseJsonObject(text: string): object | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}
