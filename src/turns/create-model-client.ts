import type OpenAI from 'openai';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { ModelClient } from '../models/model-client.js';
import { createOpenAIClient, createOpenAIResponsesModel } from '../models/openai-responses-model.js';
import { createScriptedModel } from '../models/scripted-model.js';
import { ServiceError } from '../service-error.js';
import type { TurnRequest } from './turn-request.js';

/** Whether a real provider is configured: an API key, or a base URL of a keyless endpoint. */
export function hasModelProvider(config: Config['model']): boolean {
  return config.apiKey !== undefined || config.baseUrl !== undefined;
}

/** The SDK client for the configured provider, built once at start-up; undefined without one. */
export function createSharedOpenAIClient(options: { readonly config: Config['model']; readonly logger: Logger; readonly fetch?: typeof fetch | undefined }): OpenAI | undefined {
  const { config } = options;
  if (!hasModelProvider(config)) return undefined;
  return createOpenAIClient({ apiKey: config.apiKey ?? 'unused', baseUrl: config.baseUrl, requestTimeoutMs: config.requestTimeoutMs, logger: options.logger, fetch: options.fetch });
}

/**
 * The model for one turn: the scripted model for `{script}`, the configured provider for
 * `{name}`. Asking for a provider the server does not have is the caller's fault (400), found
 * before any turn exists.
 */
export function createModelClient(options: {
  readonly request: TurnRequest['model'];
  readonly config: Config['model'];
  /** The provider's SDK client, shared by all turns. */
  readonly client: OpenAI | undefined;
  readonly logger: Logger;
  /** The scripted model's first step, when a parked turn resumes. */
  readonly scriptStart?: number;
}): ModelClient {
  const { request, config } = options;
  if ('script' in request) return createScriptedModel({ script: request.script, ...(options.scriptStart === undefined ? {} : { startAt: options.scriptStart }) });
  if (!hasModelProvider(config) || options.client === undefined) {
    throw new ServiceError({
      statusCode: 400,
      code: 'model_not_configured',
      message: 'this server has no model provider configured (OPENAI_API_KEY / OPENAI_BASE_URL); use "model": {"script": […]} or configure one',
    });
  }
  return createOpenAIResponsesModel({
    // A keyless OpenAI-compatible endpoint (a local server) still needs a non-empty key for the SDK.
    apiKey: config.apiKey ?? 'unused',
    baseUrl: config.baseUrl,
    model: request.name ?? config.defaultModel,
    maxRetries: config.maxRetries,
    requestTimeoutMs: config.requestTimeoutMs,
    logger: options.logger,
    client: options.client,
  });
}
