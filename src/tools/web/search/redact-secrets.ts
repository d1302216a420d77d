const REDACTED = '[redacted]';

/** Replaces every occurrence of each secret (an API key) in `text`; empty secrets are ignored. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret === '') continue;
    result = result.split(secret).join(REDACTED);
    // A key can come back percent-encoded (echoed in a URL) as well as verbatim.
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) result = result.split(encoded).join(REDACTED);
  }
  return result;
}
