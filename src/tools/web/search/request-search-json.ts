import type { z } from 'zod';
import { formatIssuePath } from '../../schema/format-issue-path.js';
import { explainHttpFailure, type FailureExplanation, type HttpFailure } from './explain-http-failure.js';
import { htmlToText } from './html-to-text.js';
import { readLimitedText } from './read-limited-text.js';
import { redactSecrets } from './redact-secrets.js';
import { SearchProviderError, type SearchFailureReason } from './search-provider-error.js';
import { formatBytes } from '../../../format/format-bytes.js';
import { formatDuration } from '../../../format/format-duration.js';

/** The default cap on a provider's answer; real result pages are a few tens of KiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
/** The default time a provider gets to answer completely. */
export const DEFAULT_SEARCH_TIMEOUT_MS = 10_000;

const MAX_ERROR_BODY_BYTES = 16 * 1024;
const MAX_DETAIL_CHARS = 200;

/** What a provider's error body said, in its own format. */
export interface ErrorBodyDetail {
  readonly code?: string;
  readonly detail?: string;
}

export interface SearchJsonRequest<T> {
  /** Stable provider name (`brave`), for the error's `provider`. */
  readonly provider: string;
  /** How the model reads the provider's name (`Brave`). */
  readonly label: string;
  readonly url: URL;
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** The turn's signal. */
  readonly signal: AbortSignal;
  /** DEFAULT_SEARCH_TIMEOUT_MS when absent. */
  readonly timeoutMs?: number | undefined;
  /** DEFAULT_MAX_RESPONSE_BYTES when absent. */
  readonly maxResponseBytes?: number | undefined;
  /** Validates the successful answer; only the fields the provider maps need be strict. */
  readonly schema: z.ZodType<T>;
  /** Values never to be shown in a message (API keys), even if a service echoes them. */
  readonly secrets: readonly string[];
  /** Reads the provider's error format (a parsed JSON error body). */
  readonly readErrorBody?: (body: unknown) => ErrorBodyDetail | undefined;
  /** Refines the generic meaning of a status where the provider's differs; undefined keeps it. */
  readonly explainFailure?: (failure: HttpFailure) => FailureExplanation | undefined;
  readonly fetch?: typeof fetch | undefined;
}

/**
 * Sends one request to a search service and returns its validated JSON answer. Every way it
 * can fail becomes a `SearchProviderError` whose message names the provider, says what
 * happened and what to do, and has every secret redacted: cancellation by the turn, the
 * time limit, an unreachable host, a non-2xx status (redirects are not followed, so a key
 * never travels to another host), an oversized, non-JSON or wrongly shaped body.
 */
export async function requestSearchJson<T>(request: SearchJsonRequest<T>): Promise<T> {
  const { signal, label } = request;
  const timeoutMs = request.timeoutMs ?? DEFAULT_SEARCH_TIMEOUT_MS;
  const maxResponseBytes = request.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const fail = (reason: SearchFailureReason, message: string, status?: number): SearchProviderError =>
    new SearchProviderError({
      provider: request.provider,
      reason,
      message: redactSecrets(message, request.secrets),
      ...(status === undefined ? {} : { status }),
    });
  const cancelled = () => fail('cancelled', `${label} search was cancelled`);
  if (signal.aborted) throw cancelled();

  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const forwardAbort = () => {
    controller.abort();
  };
  signal.addEventListener('abort', forwardAbort, { once: true });

  const fromThrown = (error: unknown): SearchProviderError => {
    // The turn's cancellation wins: the loop is no longer waiting for anything else.
    if (signal.aborted) return cancelled();
    if (error instanceof SearchProviderError) return error;
    if (timedOut) {
      return fail('timeout', `${label} search failed: no complete answer within ${formatDuration(timeoutMs)}; try again, or narrow the query`);
    }
    return fail('network', `${label} search failed: could not reach the search service${networkCode(error)}; try again in a moment`);
  };

  try {
    const fetchImpl = request.fetch ?? fetch;
    const response = await fetchImpl(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      redirect: 'manual',
      signal: controller.signal,
    });

    if (!response.ok) {
      const failure = await readHttpFailure(response, request);
      const explanation = request.explainFailure?.(failure) ?? explainHttpFailure(failure);
      const detail = failure.detail === undefined ? '' : ` (${failure.detail})`;
      throw fail(explanation.reason, `${label} search failed: ${String(failure.status)} ${explanation.summary}${detail}; ${explanation.advice}`, failure.status);
    }

    const body = await readLimitedText({ response, maxBytes: maxResponseBytes });
    if (body.tooLarge) {
      throw fail('bad_response', `${label} search failed: the answer was larger than ${formatBytes(maxResponseBytes)} and was not read; try again later`);
    }
    let json: unknown;
    try {
      json = JSON.parse(body.text);
    } catch {
      throw fail('bad_response', `${label} search failed: the service answered with something that is not JSON; try again later`);
    }
    const parsed = request.schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue === undefined ? '' : ` (${formatIssuePath(issue.path)}: ${issue.message.replace(/^Invalid input: /, '')})`;
      throw fail('bad_response', `${label} search failed: the service answered in an unexpected format${where}; try again later`);
    }
    return parsed.data;
  } catch (error) {
    throw fromThrown(error);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', forwardAbort);
  }
}

async function readHttpFailure<T>(response: Response, request: SearchJsonRequest<T>): Promise<HttpFailure> {
  const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
  let said: ErrorBodyDetail | undefined;
  try {
    const body = await readLimitedText({ response, maxBytes: MAX_ERROR_BODY_BYTES });
    if (!body.tooLarge && request.readErrorBody !== undefined) said = request.readErrorBody(JSON.parse(body.text));
  } catch {
    // An unreadable or non-JSON error body leaves the status to speak for itself.
  }
  const code = said?.code === undefined ? undefined : cleanText(said.code, request.secrets, 64);
  const detail = said?.detail === undefined ? undefined : cleanText(said.detail, request.secrets, MAX_DETAIL_CHARS);
  return {
    status: response.status,
    ...(code === undefined ? {} : { code }),
    ...(detail === undefined ? {} : { detail }),
    ...(Number.isInteger(retryAfter) && retryAfter >= 0 && retryAfter <= 86_400 ? { retryAfterSeconds: retryAfter } : {}),
  };
}

function cleanText(text: string, secrets: readonly string[], maxChars: number): string | undefined {
  const plain = redactSecrets(htmlToText(text), secrets);
  if (plain === '') return undefined;
  return plain.length <= maxChars ? plain : `${plain.slice(0, maxChars - 1)}…`;
}

/** ` (ECONNREFUSED)` from undici's `fetch failed` and its cause; nothing else of the error. */
function networkCode(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const code = cause instanceof Error && 'code' in cause ? cause.code : undefined;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code) ? ` (${code})` : '';
}

