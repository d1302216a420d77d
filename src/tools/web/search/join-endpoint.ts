/** `path` under an operator's base URL, keeping any path prefix it has (a proxy's `/brave`). */
export function joinEndpoint(baseUrl: string, path: string): URL {
  const base = new URL(baseUrl);
  base.pathname = `${base.pathname.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
  base.search = '';
  base.hash = '';
  return base;
}
