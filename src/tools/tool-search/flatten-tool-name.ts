import { createHash } from 'node:crypto';

/** What providers accept as a function name: `^[A-Za-z0-9_-]{1,64}$`. */
export const MAX_PROVIDER_NAME_LENGTH = 64;
const SEPARATOR = '__';
const HASH_LENGTH = 8;
const MAX_NAMESPACE_PART = 24;

/**
 * The plain-function name of a namespaced tool, for endpoints that know nothing of
 * namespaces: `calendar__create_event`. Namespace and name already match
 * `^[A-Za-z0-9_-]{1,64}$`, so the joined name is provider-safe as long as it fits; when it
 * does not, both parts are shortened and a hash of the identity keeps it unique.
 */
export function flattenToolName(options: { readonly namespace: string; readonly name: string }): string {
  const joined = `${options.namespace}${SEPARATOR}${options.name}`;
  return joined.length <= MAX_PROVIDER_NAME_LENGTH ? joined : hashedToolName(options);
}

/**
 * The fallback when the plain flattened name is too long or already taken (by a top-level
 * tool literally named `calendar__create_event`): shortened parts plus eight hex digits of the
 * SHA-256 of `namespace.name`. Deterministic, so a turn's names do not depend on timing.
 */
export function hashedToolName(options: { readonly namespace: string; readonly name: string }): string {
  const hash = createHash('sha256').update(`${options.namespace}.${options.name}`).digest('hex').slice(0, HASH_LENGTH);
  const namespacePart = options.namespace.slice(0, MAX_NAMESPACE_PART);
  const room = MAX_PROVIDER_NAME_LENGTH - namespacePart.length - SEPARATOR.length - 1 - HASH_LENGTH;
  return `${namespacePart}${SEPARATOR}${options.name.slice(0, room)}_${hash}`;
}
