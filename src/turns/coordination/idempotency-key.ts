import { createHash } from 'node:crypto';
import type { IdempotencyClaim } from '../../store/coordination-store.js';
import { canonicalJson } from '../../canonical-json.js';

/** 1–200 visible ASCII characters (0x21–0x7E), as the contract says. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7E]{1,200}$/;

/** How long a key is kept: at least the contract's 24 h. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1_000;

/**
 * Who a key belongs to: the bearer token that sent it (as a digest, never the token), or the
 * whole server when auth is off. The same key from two tokens names two different turns.
 */
export function idempotencyScope(options: { readonly authEnabled: boolean; readonly authorization: string | undefined }): string {
  if (!options.authEnabled) return 'server';
  const token = /^Bearer\s+(.+)$/i.exec(options.authorization ?? '')?.[1]?.trim() ?? '';
  return createHash('sha256').update(token).digest('hex');
}

/** The stored form of a key with the body it came with (compared as canonical JSON). */
export function idempotencyClaim(options: { readonly scope: string; readonly key: string; readonly body: unknown }): IdempotencyClaim {
  return { scope: options.scope, key: options.key, bodyHash: createHash('sha256').update(canonicalJson(options.body)).digest('hex') };
}
