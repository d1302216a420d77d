import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { CreationKey } from '../durable/creation-keys.js';
import { IDEMPOTENCY_KEY_PATTERN, idempotencyClaim, idempotencyScope } from '../turns/coordination/idempotency-key.js';

/** The `Idempotency-Key` request header of a create: what it does, said for `what` (e.g. "the turn it made"). */
export function idempotencyKeyHeader(what: string) {
  return z
    .string()
    .regex(IDEMPOTENCY_KEY_PATTERN, 'must be 1 to 200 visible ASCII characters (0x21-0x7E)')
    .optional()
    .describe(
      `Makes the request safe to retry: the same key with the same body answers ${what} (header \`idempotent-replayed: true\`) instead of making another; with another body it is \`422 idempotency_key_reused\`. Kept at least 24 h per bearer token. 1–200 visible ASCII characters (0x21–0x7E).`,
    );
}

/** The `Idempotency-Key` of a create request with its body, scoped to the bearer token that sent it; undefined without one. */
export function creationKeyOf(request: FastifyRequest, options: { readonly authEnabled: boolean }): CreationKey | undefined {
  const key = request.headers['idempotency-key'];
  if (typeof key !== 'string') return undefined;
  return idempotencyClaim({ scope: idempotencyScope({ authEnabled: options.authEnabled, authorization: request.headers.authorization }), key, body: request.body });
}

/** Marks a create's answer as the replay of an earlier request with the same key. */
export const REPLAYED_HEADER = 'idempotent-replayed';
