import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { checkRequestUrl } from '../net/check-request-url.js';
import { createGuardedLookup, systemHostLookup, type HostLookup } from '../net/guarded-lookup.js';
import { WebRequestError } from '../net/web-request-error.js';

export const WEBHOOK_USER_AGENT = 'turn-runtime-webhooks/0.1';

/** What one delivery attempt came to: an HTTP status, or why no request was made or answered. */
export type WebhookAttemptOutcome =
  | { readonly kind: 'answered'; readonly status: number }
  | { readonly kind: 'refused'; readonly reason: string }
  | { readonly kind: 'unreachable'; readonly reason: string };

/**
 * POSTs one signed webhook through the `web_fetch` address guard: the URL is checked again
 * (the allow-list may have changed), the name is resolved inside the socket's own lookup and
 * every address judged, no redirect is followed and no connection pooled.
 */
export async function postWebhook(options: {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly allowHosts: readonly string[];
  readonly timeoutMs: number;
  readonly lookup?: HostLookup;
}): Promise<WebhookAttemptOutcome> {
  let url: URL;
  let hostAllowed: boolean;
  try {
    ({ url, hostAllowed } = checkRequestUrl({ url: options.url, allowHosts: options.allowHosts }));
  } catch (error) {
    return { kind: 'refused', reason: error instanceof Error ? error.message : String(error) };
  }
  if (url.protocol === 'http:' && !hostAllowed) return { kind: 'refused', reason: 'http:// webhooks only go to hosts in WEB_FETCH_ALLOW_HOSTS' };
  const lookup = createGuardedLookup({ lookup: options.lookup ?? systemHostLookup, checkAddresses: !hostAllowed });
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<WebhookAttemptOutcome>((resolve) => {
    const request = transport.request(url, {
      method: 'POST',
      agent: false,
      lookup,
      timeout: options.timeoutMs,
      headers: { 'content-type': 'application/json', 'user-agent': WEBHOOK_USER_AGENT, 'content-length': String(Buffer.byteLength(options.body)), ...options.headers },
    });
    request.on('response', (response: IncomingMessage) => {
      response.resume();
      response.on('end', () => {
        resolve({ kind: 'answered', status: response.statusCode ?? 0 });
      });
      response.on('error', () => {
        resolve({ kind: 'answered', status: response.statusCode ?? 0 });
      });
    });
    request.on('timeout', () => {
      request.destroy(new WebRequestError('timeout', `no answer within ${options.timeoutMs} ms`));
    });
    request.on('error', (error) => {
      if (error instanceof WebRequestError && error.failure === 'refused-address') resolve({ kind: 'refused', reason: error.message.replace('can be fetched', 'can receive webhooks') });
      else resolve({ kind: 'unreachable', reason: error.message });
    });
    request.end(options.body);
  });
}
