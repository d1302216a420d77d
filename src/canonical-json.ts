import canonicalize from 'canonicalize';

/**
 * RFC 8785 (JCS) canonical JSON of a value as JSON carries it: object keys sorted, no
 * whitespace, numbers in their shortest form. Properties JSON cannot carry (undefined) are
 * dropped first, exactly as `JSON.stringify` drops them, so two values that mean the same JSON
 * compare equal however their keys were ordered. One implementation for idempotency bodies
 * and approval hashes alike.
 */
export function canonicalJson(value: unknown): string {
  // JSON.stringify answers undefined for undefined (and functions), whatever its declared type says.
  if (value === undefined) return 'null';
  return canonicalize(JSON.parse(JSON.stringify(value))) ?? 'null';
}
