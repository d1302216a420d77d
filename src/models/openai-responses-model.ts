import { APIError } from 'openai';
import type { Logger } from 'pino';
import { isJsonObject } from '../json.js';
import { encodeResponsesRequest } from './encode-responses-request.js';
import { WaitingRequest } from './waiting-request.js';
import { classifyModelFailure, type ModelFailure } from './classify-model-failure.js';
import type { ModelCallOptions, ModelClient, ModelRequest, ModelResponse } from './model-client.js';
import { ModelError } from './model-client.js';
import { retryDelayMs } from './model-retry-policy.js';
import { providerResponseBody } from './provider-fetch.js';
import { createResponsesEndpoint, postResponsesStream, type ResponsesEndpoint } from './responses-endpoint.js';
import { readServerSentEvents, type ServerSentMessage } from './read-server-sent-events.js';
import { createResponseStreamAccumulator } from './response-stream-accumulator.js';
import { sleepWithSignal, type AbortableSleep } from './sleep-with-signal.js';
import { toModelResponse } from './to-model-response.js';

export interface OpenAIResponsesModelOptions {
  readonly apiKey: string;
  /** e.g. `https://api.openai.com/v1`; the OpenAI endpoint when absent. */
  readonly baseUrl?: string | undefined;
  readonly model: string;
  /** Further attempts after the first, for failures that may pass (429, 5xx, resets …). */
  readonly maxRetries: number;
  /**
   * How long one attempt may go without hearing from the provider (before the headers, or
   * between two stream events) before it counts as hung, is aborted, and may be retried.
   */
  readonly requestTimeoutMs: number;
  readonly logger: Logger;
  /** The wait between attempts; injectable so tests need not wait. Must reject on abort. */
  readonly sleep?: AbortableSleep;
  /** Where the requests go, shared by every turn (see `createResponsesEndpoint`); one is made from `apiKey` and `baseUrl` when absent. */
  readonly endpoint?: ResponsesEndpoint;
  /** Jitter source in [0, 1); injectable for deterministic tests. */
  readonly random?: () => number;
  /**
   * Asks for `reasoning.encrypted_content`, without which a `store: false` request cannot
   * send a reasoning item back ("Item with id 'rs_…' not found"). Defaults to on for
   * reasoning model names (`o1`…, `gpt-5`…, `codex`…); non-reasoning models may refuse it.
   */
  readonly includeEncryptedReasoning?: boolean;
}

type AttemptOutcome = { readonly ok: true; readonly response: ModelResponse } | { readonly ok: false; readonly failure: ModelFailure };

/**
 * A `ModelClient` over the OpenAI Responses API (or any server speaking it), streaming every
 * request. Retries are ours, not the SDK's: only we know whether text already reached the
 * user, after which a retry would repeat it.
 */
export function createOpenAIResponsesModel(options: OpenAIResponsesModelOptions): ModelClient {
  const { apiKey, model, maxRetries, requestTimeoutMs, logger } = options;
  const sleep = options.sleep ?? sleepWithSignal;
  const random = options.random ?? Math.random;
  const includeEncryptedReasoning = options.includeEncryptedReasoning ?? /^(o\d|gpt-5|codex)/i.test(model);
  const redact = (text: string): string => redactSecret(text, apiKey);
  const endpoint = options.endpoint ?? createResponsesEndpoint({ apiKey, baseUrl: options.baseUrl });

  const runAttempt = async (request: ModelRequest, call: ModelCallOptions, progress: { outputForwarded: boolean }): Promise<AttemptOutcome> => {
    const turnSignal = call.signal;
    const controller = new AbortController();
    const abortFromTurn = (): void => { controller.abort(turnSignal.reason); };
    turnSignal.addEventListener('abort', abortFromTurn, { once: true });
    // An object, not a `let`: the timer callback mutates it behind the compiler's back.
    const idle = { timedOut: false };
    const idleTimer = setTimeout(() => {
      idle.timedOut = true;
      controller.abort(new ModelError('model request timed out'));
    }, requestTimeoutMs);
    const accumulator = createResponseStreamAccumulator();
    let listenerFailure: { readonly error: unknown } | undefined;
    const waiting = new WaitingRequest(request.input);
    try {
      // The body is encoded for each attempt, so that nothing keeps it while the attempt waits
      // (its pieces are kept by the conversation's items anyway, deflated if it waits long, see
      // WaitingRequest); the event stream is read here
      // (see readServerSentEvents for why).
      const body = encodeResponsesRequest({ model, request, includeEncryptedReasoning });
      const response = await postResponsesStream(endpoint, body, controller.signal);
      const responseBody = providerResponseBody(response);
      if (responseBody === null) throw new ModelError('the provider answered the stream request without a body');
      for await (const messages of readServerSentEvents(responseBody)) {
        idleTimer.refresh();
        for (const message of messages) {
          const event = parseStreamEvent(message, response.headers);
          if (event === undefined) continue;
          const effect = accumulator.apply(event);
          if (effect.kind === 'text') {
            progress.outputForwarded = true;
            try {
              call.onTextDelta(effect.delta);
            } catch (error) {
              listenerFailure = { error };
              throw error;
            }
          } else if (effect.kind === 'failed') {
            const code = effect.code === undefined ? '' : ` (${effect.code})`;
            return { ok: false, failure: { error: new ModelError(`the model response failed: ${redact(effect.message)}${code}`), retryable: false } };
          } else if (effect.kind === 'incomplete') {
            logger.warn({ model, reason: effect.reason }, 'model response incomplete; using what arrived');
          }
        }
      }
    } catch (error) {
      turnSignal.throwIfAborted();
      if (listenerFailure !== undefined) throw listenerFailure.error;
      // A connection that breaks after the terminal event has already delivered the whole response.
      if (!idle.timedOut && !accumulator.finished) {
        return { ok: false, failure: classifyModelFailure(error, { outputForwarded: progress.outputForwarded, redact }) };
      }
    } finally {
      waiting.end();
      clearTimeout(idleTimer);
      turnSignal.removeEventListener('abort', abortFromTurn);
    }
    turnSignal.throwIfAborted();
    if (!accumulator.finished) {
      const message = idle.timedOut
        ? `the model request timed out: nothing from the provider for ${requestTimeoutMs} ms`
        : 'the model stream ended before the response was complete';
      const after = progress.outputForwarded ? ' (after output had started)' : '';
      return { ok: false, failure: { error: new ModelError(message + after), retryable: !progress.outputForwarded } };
    }
    try {
      return { ok: true, response: toModelResponse(accumulator.result()) };
    } catch (error) {
      if (error instanceof ModelError) return { ok: false, failure: { error, retryable: false } };
      throw error;
    }
  };

  const respond = async (request: ModelRequest, call: ModelCallOptions): Promise<ModelResponse> => {
    const progress = { outputForwarded: false };
    for (let attempt = 1; ; attempt += 1) {
      call.signal.throwIfAborted();
      const outcome = await runAttempt(request, call, progress);
      if (outcome.ok) return outcome.response;
      const { failure } = outcome;
      if (!failure.retryable || attempt > maxRetries) throw withAttempts(failure.error, attempt);
      const delayMs = retryDelayMs({ retryIndex: attempt - 1, headers: failure.headers, random, now: Date.now });
      logger.warn({ model, attempt, delayMs, status: failure.error.status, reason: failure.error.message }, 'model request failed; retrying');
      await sleep(delayMs, call.signal);
    }
  };

  return { model, respond };
}

/**
 * One message of the stream as the SDK's own `Stream` reads it: `[DONE]` ends nothing and is
 * skipped, the data is JSON, and an `error` field in it is the provider's APIError.
 */
function parseStreamEvent(message: ServerSentMessage, headers: Headers): unknown {
  if (message.data.startsWith('[DONE]')) return undefined;
  const data: unknown = JSON.parse(message.data);
  if (isJsonObject(data) && data['error'] !== undefined && data['error'] !== null && data['error'] !== false) {
    throw new APIError(undefined, data['error'], undefined, headers);
  }
  return data;
}

function withAttempts(error: ModelError, attempts: number): ModelError {
  if (attempts === 1) return error;
  const status = error.status === undefined ? {} : { status: error.status };
  return new ModelError(`${error.message} (gave up after ${attempts} attempts)`, { ...status, cause: error.cause ?? error });
}

/** The key never appears in our messages, even when a provider echoes it back. */
function redactSecret(text: string, secret: string): string {
  const withoutKey = secret.length >= 8 ? text.split(secret).join('[redacted]') : text;
  return withoutKey.replace(/\bsk-[A-Za-z0-9_-]{8,}/g, 'sk-[redacted]');
}
