import { checkRequestUrl } from '../net/check-request-url.js';
import { WebRequestError } from '../net/web-request-error.js';
import { invalidRequest, type RequestIssue } from '../service-error.js';

/**
 * Checks a webhook URL when the work is created, so a bad one is the caller's 400 and never
 * a delivery that cannot happen: the same guard as `web_fetch` (scheme, credentials, a
 * literal private address unless allow-listed), and `https://` unless the host is on
 * WEB_FETCH_ALLOW_HOSTS. A name that resolves to a private address is refused at delivery.
 */
export function checkWebhookUrl(options: {
  readonly url: string;
  readonly allowHosts: readonly string[];
  readonly secretConfigured: boolean;
  /** Where the field is in the request body, for the error. */
  readonly path: readonly (string | number)[];
}): URL {
  const problem = (message: string): never => {
    const issue: RequestIssue = { path: [...options.path], message };
    throw invalidRequest([issue]);
  };
  if (!options.secretConfigured) problem('this server has no WEBHOOK_SECRET, so it cannot sign webhooks');
  try {
    const checked = checkRequestUrl({ url: options.url, allowHosts: options.allowHosts });
    if (checked.url.protocol === 'http:' && !checked.hostAllowed) problem('webhooks go to https:// URLs; http:// only to hosts in WEB_FETCH_ALLOW_HOSTS');
    return checked.url;
  } catch (error) {
    if (error instanceof WebRequestError) problem(error.message.replace('can be fetched', 'can receive webhooks').replace('are not fetched', 'cannot receive webhooks'));
    throw error;
  }
}
