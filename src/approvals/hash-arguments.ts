import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';
import type { JsonValue } from '../json.js';

/** Validated arguments as plain JSON, with the hash a decision must name. */
export interface HashedArguments {
  readonly value: JsonValue;
  /** Lowercase hex SHA-256 of the RFC 8785 canonical JSON of `value`. */
  readonly hash: string;
}

/**
 * The JSON form of a call's validated arguments and its `argumentsHash`: SHA-256 over the RFC
 * 8785 (JCS) canonical text, so anyone holding the arguments can recompute it. Values JSON
 * cannot carry (undefined properties) are dropped first, exactly as the event shows them.
 */
export function hashArguments(params: unknown): HashedArguments {
  const text = JSON.stringify(params ?? {});
  const value = JSON.parse(text) as JsonValue;
  return { value, hash: createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex') };
}
