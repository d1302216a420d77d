import { isJsonObject, type JsonValue } from '../../../json.js';
import type { AgentToolResult } from '../../tool-result.js';
import { displayUrl } from './display-url.js';
import { formatBytes } from '../../../format/format-bytes.js';

/** "Fetching example.com/page" or "Fetching 3 pages". */
export function describeWebFetch(urls: readonly string[]): string {
  const [only] = urls;
  if (urls.length === 1 && only !== undefined) return `Fetching ${displayUrl(only)}`;
  return `Fetching ${urls.length} pages`;
}

/** "Fetched example.com/page (12 KB, cached)" or "Fetched 3 pages (1 failed)". */
export function describeCompletedWebFetch(urls: readonly string[], result: AgentToolResult): string {
  const pages = isJsonObject(result.details) && Array.isArray(result.details['pages']) ? result.details['pages'].filter(isJsonObject) : [];
  const [only] = pages;
  if (urls.length === 1 && only !== undefined && only['ok'] === true) {
    const size = typeof only['bytes'] === 'number' ? formatBytes(only['bytes']) : undefined;
    const notes = [size, only['cached'] === true ? 'cached' : undefined].filter((note) => note !== undefined);
    return `Fetched ${displayUrl(text(only['url']))}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`;
  }
  const failed = pages.filter((page) => page['ok'] !== true).length;
  const cached = pages.filter((page) => page['cached'] === true).length;
  const notes = [failed > 0 ? `${failed} failed` : undefined, cached > 0 ? `${cached} cached` : undefined].filter((note) => note !== undefined);
  return `Fetched ${urls.length} ${urls.length === 1 ? 'page' : 'pages'}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`;
}

function text(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}
