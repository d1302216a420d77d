/** A URL as a label shows it: no scheme, no trailing slash, at most 60 characters. */
export function displayUrl(url: string): string {
  let shown: string;
  try {
    const parsed = new URL(url);
    shown = `${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}${parsed.search}`;
  } catch {
    shown = url;
  }
  return shown.length > 60 ? `${shown.slice(0, 59)}…` : shown;
}
