import type { GuardedResponse } from '../../../net/guarded-get.js';
import { decodeText } from './decode-text.js';
import type { FetchedPage } from './fetched-page.js';
import { formatBytes } from '../../../format/format-bytes.js';
import { formatJson } from './format-json.js';
import { htmlToMarkdown } from './html-to-markdown.js';
import { parseContentType } from './parse-content-type.js';

const TEXT_MEDIA_TYPES = new Set([
  'application/javascript',
  'application/ecmascript',
  'application/x-javascript',
  'application/xml',
  'application/x-yaml',
  'application/yaml',
  'application/toml',
  'application/x-ndjson',
  'application/csv',
  'application/x-sh',
]);

/**
 * Turns a response into text by what it is: HTML becomes readable Markdown, JSON is
 * indented, text is kept as it is, and anything else is described (type and size) rather
 * than dumped. A response without a Content-Type is sniffed.
 */
export function renderResponse(options: { readonly requestedUrl: string; readonly response: GuardedResponse; readonly fetchedAt: Date }): FetchedPage {
  const { response } = options;
  const contentType = parseContentType(response.contentType);
  const kind = kindOf(contentType.mediaType, response.body);
  const base = {
    requestedUrl: options.requestedUrl,
    url: response.url,
    status: response.status,
    mediaType: contentType.mediaType === '' ? 'unknown' : contentType.mediaType,
    bytes: response.body.length,
    truncated: response.truncated,
    fetchedAt: options.fetchedAt.toISOString(),
  };
  if (kind === 'binary') {
    return {
      ...base,
      kind,
      title: undefined,
      text: `This is ${base.mediaType} content (${formatBytes(base.bytes)}${response.truncated ? ' read before the size cap' : ''}); web_fetch shows HTML, JSON and text, not this type.`,
    };
  }
  const text = decodeText({ body: response.body, charset: contentType.charset, html: kind === 'html' });
  if (kind === 'html') {
    const page = htmlToMarkdown({ html: text, url: response.url });
    return { ...base, kind, title: page.title, text: page.markdown };
  }
  if (kind === 'json') {
    const formatted = formatJson(text);
    return { ...base, kind: formatted === undefined ? 'text' : 'json', title: undefined, text: formatted ?? text };
  }
  return { ...base, kind, title: undefined, text };
}

function kindOf(mediaType: string, body: Buffer): FetchedPage['kind'] {
  if (mediaType === 'text/html' || mediaType === 'application/xhtml+xml') return 'html';
  if (mediaType === 'application/json' || mediaType === 'text/json' || mediaType.endsWith('+json')) return 'json';
  if (mediaType.startsWith('text/') || mediaType.endsWith('+xml') || TEXT_MEDIA_TYPES.has(mediaType)) return 'text';
  if (mediaType === '') return sniff(body);
  return 'binary';
}

function sniff(body: Buffer): FetchedPage['kind'] {
  const head = body.subarray(0, 1024);
  if (head.includes(0)) return 'binary';
  const start = head.toString('utf8').trimStart().slice(0, 64).toLowerCase();
  if (start.startsWith('<!doctype html') || start.startsWith('<html')) return 'html';
  if (start.startsWith('{') || start.startsWith('[')) return 'json';
  return 'text';
}
