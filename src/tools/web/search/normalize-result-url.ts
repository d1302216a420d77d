const TRACKING_PARAMETER = /^(?:utm_[a-z]+|fbclid|gclid|mc_cid|mc_eid)$/i;

/**
 * The key under which two result URLs count as the same page: scheme, `www.`, default
 * port, fragment, trailing slash, tracking parameters and parameter order do not matter.
 * Undefined for anything that is not an http(s) URL.
 */
export function normalizeResultUrl(raw: string): string | undefined {
  if (!URL.canParse(raw)) return undefined;
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const host = url.hostname.toLowerCase().replace(/^www\./, '');
  const port = url.port === '' || url.port === '80' || url.port === '443' ? '' : `:${url.port}`;
  const path = url.pathname.replace(/\/+$/, '');
  const parameters = [...url.searchParams].filter(([name]) => !TRACKING_PARAMETER.test(name));
  parameters.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const query = new URLSearchParams(parameters).toString();
  return `${host}${port}${path}${query === '' ? '' : `?${query}`}`;
}
