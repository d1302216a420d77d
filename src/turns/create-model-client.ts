import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { ModelClient } from '../models/model-client.js';
import { createOpenAIResponsesModel } from '../models/openai-responses-model.js';
import { createResponsesEndpoint, type ResponsesEndpoint } from '../models/responses-endpoint.js';
import { createScriptedModel } from '../models/scripted-model.js';
import { ServiceError } from '../service-error.js';
import type { TurnRequest } from './turn-request.js';

/** Whether a real provider is configured: an API key, or a base URL of a keyless endpoint. */
export function hasModelProvider(config: Config['model']): boolean {
  return config.apiKey !== undefined || config.baseUrl !== undefined;
}

/** The configured provider's Responses endpoint, made once at start-up; undefined without one. */
export function createSharedModelEndpoint(options: { readonly config: Config['model']; readonly fetch?: typeof fetch | undefined }): ResponsesEndpoint | undefined {
  const { config } = options;
  if (!hasModelProvider(config)) return undefined;
  // A keyless OpenAI-compatible endpoint (a local server) is still sent a bearer token.
  return createResponsesEndpoint({ apiKey: config.apiKey ?? 'unused', baseUrl: config.baseUrl, fetch: options.fetch });
}

/**
 * The model for one turn: the scripted model for `{script}`, the configured provider for
 * `{name}`. Asking for a provider the server does not have is the caller's fault (400), found
 * before any turn exists.
 */
export function createModelClient(options: {
  readonly request: TurnRequest['model'];
  readonly config: Config['model'];
  /** The provider's endpoint, shared by all turns. */
  readonly endpoint: ResponsesEndpoint | undefined;
  readonly logger: Logger;
  /** The scripted model's first step, when a parked turn resumes. */
  readonly scriptStart?: number;
}): ModelClient {
  const { request, config } = options;
  if ('script' in request) return createScriptedModel({ script: request.script, ...(options.scriptStart === undefined ? {} : { startAt: options.scriptStart }) });
  if (!hasModelProvider(config) || options.endpoint === undefined) {
    throw new ServiceError({
      statusCode: 400,
      code: 'model_not_configured',
      message: 'this server has no model provider configured (OPENAI_API_KEY / OPENAI_BASE_URL); use "model": {"script": […]} or configure one',
    });
  }
  return createOpenAIResponsesModel({
    apiKey: config.apiKey ?? 'unused',
    baseUrl: config.baseUrl,
    model: request.name ?? config.defaultModel,
    maxRetries: config.maxRetries,
    requestTimeoutMs: config.requestTimeoutMs,
    logger: options.logger,
    endpoint: options.endpoint,
  });
}
