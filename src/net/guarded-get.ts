import http, { type ClientRequest, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { checkRequestUrl } from './check-request-url.js';
import { createGuardedLookup, systemHostLookup, type HostLookup } from './guarded-lookup.js';
import { readCappedBody } from './read-capped-body.js';
import { WebRequestError } from './web-request-error.js';

/** Says who is asking, honestly; sent on every request instead of a browser's disguise. */
export const WEB_FETCH_USER_AGENT = 'turn-runtime-web-fetch/0.1 (an AI agent fetching a page for its user)';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface GuardedGetOptions {
  readonly url: string | URL;
  /** Hosts (`name` or `name:port`) whose addresses are not checked; see `isHostAllowed`. */
  readonly allowHosts: readonly string[];
  /** Caps the whole exchange, every redirect and the body included. */
  readonly timeoutMs: number;
  /** Caps the body, on the wire and decoded. */
  readonly maxBytes: number;
  readonly maxRedirects: number;
  /** Cancels everything at once (the turn's signal). */
  readonly signal?: AbortSignal;
  /** Resolves host names; the operating system's resolver unless a test injects one. */
  readonly lookup?: HostLookup;
  readonly accept?: string;
}

export interface GuardedResponse {
  /** Where the body came from, after redirects. */
  readonly url: string;
  /** The URLs that redirected here, in order, starting with the one asked for. */
  readonly redirects: readonly string[];
  readonly status: number;
  readonly statusText: string;
  readonly contentType: string | undefined;
  readonly body: Buffer;
  /** The body was longer than `maxBytes` and was cut there. */
  readonly truncated: boolean;
  /** Bytes received on the wire, before decoding. */
  readonly wireBytes: number;
}

/**
 * An HTTP(S) GET that cannot be pointed at the service's own network. Every hop (the URL
 * and each redirect, followed by hand up to `maxRedirects`) is checked before it connects:
 * scheme, credentials, IP literals, and — inside the socket's own `lookup` — every address
 * the name resolves to. No cookies, credentials or auth headers are ever sent, no
 * connection is pooled (a pooled socket would skip the lookup check), and the body is
 * capped. Throws `WebRequestError`; HTTP error statuses are returned, not thrown.
 */
export async function guardedGet(options: GuardedGetOptions): Promise<GuardedResponse> {
  const timeout = new AbortController();
  const timer = setTimeout(() => {
    timeout.abort(new WebRequestError('timeout', `no complete response within ${options.timeoutMs} ms`));
  }, options.timeoutMs);
  timer.unref();
  const signals = options.signal === undefined ? [timeout.signal] : [options.signal, timeout.signal];
  const signal = AbortSignal.any(signals);
  try {
    return await followRedirects(options, signal);
  } catch (error) {
    throw failureOf(error, { callerSignal: options.signal, timeoutSignal: timeout.signal });
  } finally {
    clearTimeout(timer);
  }
}

async function followRedirects(options: GuardedGetOptions, signal: AbortSignal): Promise<GuardedResponse> {
  const redirects: string[] = [];
  let target = checkRequestUrl({ url: options.url, allowHosts: options.allowHosts });
  for (;;) {
    signal.throwIfAborted();
    const { request, response } = await send(target.url, {
      signal,
      lookup: options.lookup ?? systemHostLookup,
      checkAddresses: !target.hostAllowed,
      accept: options.accept,
    });
    try {
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECT_STATUSES.has(status) && location !== undefined) {
        if (redirects.length >= options.maxRedirects) {
          throw new WebRequestError('too-many-redirects', `stopped after ${options.maxRedirects} redirects (the limit); the last one pointed to ${location}`);
        }
        redirects.push(target.url.href);
        target = checkRequestUrl({ url: location, base: target.url, allowHosts: options.allowHosts });
        continue;
      }
      const body = await readCappedBody({ response, maxBytes: options.maxBytes, signal });
      return {
        url: target.url.href,
        redirects,
        status,
        statusText: response.statusMessage ?? '',
        contentType: response.headers['content-type'],
        ...body,
      };
    } finally {
      response.destroy();
      request.destroy();
    }
  }
}

function send(
  url: URL,
  options: { readonly signal: AbortSignal; readonly lookup: HostLookup; readonly checkAddresses: boolean; readonly accept: string | undefined },
): Promise<{ request: ClientRequest; response: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    // Only these headers are ever sent: no Cookie, no Authorization, nothing from the caller.
    const request = client.request(url, {
      method: 'GET',
      agent: false,
      lookup: createGuardedLookup({ lookup: options.lookup, checkAddresses: options.checkAddresses }),
      signal: options.signal,
      headers: {
        'user-agent': WEB_FETCH_USER_AGENT,
        accept: options.accept ?? '*/*',
        'accept-encoding': 'gzip, deflate, br',
      },
    });
    request.once('response', (response) => {
      resolve({ request, response });
    });
    // Kept for the request's whole life: a socket error after the response would otherwise
    // be an unhandled 'error' event. Rejecting a settled promise is a no-op.
    request.on('error', reject);
    request.end();
  });
}

function failureOf(
  error: unknown,
  signals: { readonly callerSignal: AbortSignal | undefined; readonly timeoutSignal: AbortSignal },
): WebRequestError {
  if (error instanceof WebRequestError) return error;
  if (signals.timeoutSignal.aborted && signals.timeoutSignal.reason instanceof WebRequestError) return signals.timeoutSignal.reason;
  if (signals.callerSignal?.aborted === true) return new WebRequestError('aborted', 'the fetch was cancelled', { cause: error });
  const code = error instanceof Error && 'code' in error ? String(error.code) : '';
  switch (code) {
    case 'ECONNREFUSED':
      return new WebRequestError('network', 'the server refused the connection', { cause: error });
    case 'ECONNRESET':
      return new WebRequestError('network', 'the server closed the connection', { cause: error });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new WebRequestError('dns', 'the host name could not be resolved', { cause: error });
    case 'HPE_HEADER_OVERFLOW':
      return new WebRequestError('network', 'the response headers were too large', { cause: error });
    default:
      break;
  }
  if (code.startsWith('HPE_')) return new WebRequestError('network', 'the server sent a malformed HTTP response', { cause: error });
  if (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('UNABLE_TO') || code.startsWith('DEPTH_ZERO')) {
    return new WebRequestError('network', `the TLS connection failed (${code})`, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new WebRequestError('network', `the request failed: ${message}`, { cause: error });
}
