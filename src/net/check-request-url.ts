import { isIP } from 'node:net';
import { classifyAddress } from './address-policy.js';
import { isHostAllowed } from './host-allow-list.js';
import { WebRequestError } from './web-request-error.js';

export interface CheckedRequestUrl {
  readonly url: URL;
  /** The host is on the operator's allow-list: its addresses are not checked. */
  readonly hostAllowed: boolean;
}

/**
 * Everything that can be refused before a socket exists: a URL that does not parse, a
 * scheme other than http/https, credentials in the URL, and a host that is an IP literal
 * outside the public internet. IP literals must be checked here because Node connects to
 * them without calling `lookup`. The WHATWG parser has already rewritten the odd IPv4
 * spellings (`2130706433`, `0177.0.0.1`, `0x7f.1`) to dotted decimal, so they are caught too.
 */
export function checkRequestUrl(options: {
  readonly url: string | URL;
  /** Resolves a relative URL, such as a redirect's `Location`. */
  readonly base?: URL;
  readonly allowHosts: readonly string[];
}): CheckedRequestUrl {
  let url: URL;
  try {
    url = new URL(options.url, options.base);
  } catch {
    throw new WebRequestError('refused-url', `"${truncate(String(options.url))}" is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WebRequestError('refused-url', `only http and https URLs can be fetched, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new WebRequestError('refused-url', 'URLs with credentials (user:password@) are not fetched');
  }
  if (url.hostname === '') throw new WebRequestError('refused-url', 'the URL has no host');

  const hostAllowed = isHostAllowed(url, options.allowHosts);
  const literal = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (!hostAllowed && isIP(literal) !== 0) {
    const verdict = classifyAddress(literal);
    if (!verdict.allowed) {
      throw new WebRequestError('refused-address', `refused ${url.host}: ${verdict.explanation}; only public internet addresses can be fetched`);
    }
  }
  return { url, hostAllowed };
}

function truncate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
