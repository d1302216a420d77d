/**
 * Whether an operator listed this URL's host as trusted (`WEB_FETCH_ALLOW_HOSTS`), which
 * lets it through to non-public addresses. Entries match exactly and case-insensitively:
 * `intranet.example` matches that host on any port, `intranet.example:8080` (or
 * `[fd00::1]:8080`) only that port. No wildcards and no suffix matching, so
 * `evil.intranet.example` is never covered by accident.
 */
export function isHostAllowed(url: URL, allowHosts: readonly string[]): boolean {
  if (allowHosts.length === 0) return false;
  const hostname = url.hostname.toLowerCase();
  const port = url.port === '' ? defaultPort(url.protocol) : url.port;
  const withPort = `${hostname}:${port}`;
  return allowHosts.some((entry) => {
    const normalized = entry.trim().toLowerCase();
    return normalized === hostname || normalized === withPort;
  });
}

function defaultPort(protocol: string): string {
  return protocol === 'https:' ? '443' : '80';
}
