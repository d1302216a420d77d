import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from '@fastify/type-provider-zod';
import type { FastifyError, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify';
import { ServiceError } from '../service-error.js';
import { errorEnvelope } from './error-envelope.js';

/** Fastify's own error codes, mapped onto the contract's. */
const FASTIFY_CODES: Partial<Record<string, { statusCode: number; code: string; message?: string }>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { statusCode: 413, code: 'payload_too_large', message: 'the request body is larger than this server accepts' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { statusCode: 415, code: 'unsupported_media_type', message: 'send the body as application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { statusCode: 400, code: 'invalid_request', message: 'the Content-Length does not match the body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { statusCode: 400, code: 'invalid_request', message: 'the body is empty; send a JSON object' },
  FST_ERR_CTP_INVALID_JSON_BODY: { statusCode: 400, code: 'invalid_request' },
  FST_ERR_CTP_INVALID_CONTENT_TYPE: { statusCode: 415, code: 'unsupported_media_type', message: 'the Content-Type header is malformed' },
};

/**
 * The one error handler: every failure becomes the contract's envelope. Validation and
 * caller faults keep their message; anything unexpected is a 500 whose details stay in the log.
 */
export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (hasZodFastifySchemaValidationErrors(error)) {
    const validation: readonly FastifySchemaValidationError[] = (error as FastifyError).validation ?? [];
    const context = (error as FastifyError).validationContext ?? 'body';
    const validated = validatedPart(request, context);
    const issues = validation.map((issue) => {
      const path = issue.instancePath
        .split('/')
        .filter((segment: string) => segment !== '')
        .map((segment: string) => (/^\d+$/.test(segment) ? Number(segment) : segment));
      const absent = validated !== undefined && ABSENT_VALUE_CODES.has(issue.keyword) && !isPresent(validated.value, path);
      return { path, message: absent ? 'required' : (issue.message ?? 'invalid').replace(/^Invalid input: /, '') };
    });
    const message = issues.map((issue) => `${issue.path.join('.') || context}: ${issue.message}`).join('; ');
    void reply.code(400).send(errorEnvelope('invalid_request', message, issues));
    return;
  }
  if (error instanceof ServiceError) {
    if (error.statusCode >= 500) request.log.error({ err: error }, error.message);
    void reply.code(error.statusCode).send(errorEnvelope(error.code, error.message, error.issues?.map((issue) => ({ path: [...issue.path], message: issue.message }))));
    return;
  }
  const known = FASTIFY_CODES[error.code];
  if (known !== undefined) {
    void reply.code(known.statusCode).send(errorEnvelope(known.code, known.message ?? error.message));
    return;
  }
  if (error.statusCode === 429) {
    void reply.code(429).send(errorEnvelope('rate_limited', 'too many requests; slow down and retry later'));
    return;
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 && !isResponseSerializationError(error)) {
    void reply.code(error.statusCode).send(errorEnvelope('invalid_request', error.message));
    return;
  }
  request.log.error({ err: error }, 'request failed');
  void reply.code(500).send(errorEnvelope('internal_error', 'the server failed to handle this request'));
}

/**
 * The Zod codes an absent value raises: `invalid_type` for a plain field ("expected string,
 * received undefined"), `invalid_union` for a union ("Invalid input", which names nothing) and
 * `invalid_value` for an enum or literal (which lists the options, not that none was sent).
 * `custom` is left out: a refinement's message (e.g. `task: required when kind is
 * "workflow_task"`) is its author's and says more than `required` would.
 */
const ABSENT_VALUE_CODES: ReadonlySet<string> = new Set(['invalid_type', 'invalid_union', 'invalid_value']);

/**
 * The request part that failed validation, as the client sent it. Zod drops an issue's
 * `input` unless asked to report it (and @fastify/type-provider-zod does not ask), so whether
 * the value was absent is read from the request itself; Fastify leaves the parsed part in
 * place when validation fails. Undefined for a part this does not know, whose messages stay.
 */
function validatedPart(request: FastifyRequest, context: string): { readonly value: unknown } | undefined {
  switch (context) {
    case 'body':
      return { value: request.body };
    case 'querystring':
      return { value: request.query };
    case 'params':
      return { value: request.params };
    case 'headers':
      return { value: request.headers };
    default:
      return undefined;
  }
}

/** Whether `path` names a value the client sent: own keys only, so `constructor` is not "present". */
function isPresent(root: unknown, path: readonly (string | number)[]): boolean {
  let value = root;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, segment)) return false;
    value = (value as Record<string | number, unknown>)[segment];
  }
  return value !== undefined;
}

export function handleNotFound(request: FastifyRequest, reply: FastifyReply): void {
  void reply.code(404).send(errorEnvelope('not_found', `no route ${request.method} ${request.url.split('?')[0] ?? ''}`));
}
