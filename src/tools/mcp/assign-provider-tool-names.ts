import { createHash } from 'node:crypto';

const PROVIDER_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_LENGTH = 64;

/**
 * Gives each MCP tool a name providers accept (`^[A-Za-z0-9_-]{1,64}$`). Names that already
 * fit keep it, so they are never displaced; the others get their unsafe characters replaced
 * with `_`, and a short hash of the original name when they were cut to 64 characters or
 * would clash with another tool. The call still goes to the server with the original name.
 * Returns original → provider name for every distinct original name.
 */
export function assignProviderToolNames(originalNames: readonly string[]): Map<string, string> {
  const assigned = new Map<string, string>();
  const taken = new Set<string>();
  for (const name of originalNames) {
    if (PROVIDER_NAME.test(name) && !assigned.has(name)) {
      assigned.set(name, name);
      taken.add(name);
    }
  }
  for (const name of originalNames) {
    if (assigned.has(name)) continue;
    const sanitized = name.replaceAll(/[^A-Za-z0-9_-]/g, '_');
    let candidate = sanitized.length > 0 && sanitized.length <= MAX_LENGTH && !taken.has(sanitized) ? sanitized : withHash(sanitized, name, '');
    for (let attempt = 1; taken.has(candidate); attempt += 1) candidate = withHash(sanitized, name, String(attempt));
    assigned.set(name, candidate);
    taken.add(candidate);
  }
  return assigned;
}

function withHash(sanitized: string, original: string, salt: string): string {
  const hash = createHash('sha256').update(original).update(salt).digest('hex').slice(0, 8);
  return `${sanitized.slice(0, MAX_LENGTH - hash.length - 1)}_${hash}`;
}
