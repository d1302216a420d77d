import { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import { joinBody, joinText, type EncodedBody } from './encode-responses-request.js';

/** What a failed request's answer may bring to its error: more is cut off. */
const MAX_ERROR_BODY_BYTES = 1024 * 1024;

/** The body of each successful answer, read by `providerResponseBody` instead of `response.body`. */
const streamedBodies = new WeakMap<Response, Readable>();

/** The pieces behind each stream made by `providerRequestBody`, until it is sent or read. */
const pendingBodies = new WeakMap<ReadableStream<Uint8Array>, BodySource>();

/** Holds a body's pieces until they are taken, once: then nothing holds them but their owners. */
class BodySource {
  #body: EncodedBody | undefined;
  readonly byteLength: number;
  constructor(body: EncodedBody) {
    this.#body = body;
    this.byteLength = body.byteLength;
  }

  /** The pieces joined into one buffer, for whoever reads the body first; undefined after. */
  takeJoined(): Buffer | undefined {
    const body = this.#body;
    this.#body = undefined;
    return body === undefined ? undefined : joinBody(body);
  }

  /** The pieces joined into one string, for whoever reads the body first; undefined after. */
  takeText(): string | undefined {
    const body = this.#body;
    this.#body = undefined;
    return body === undefined ? undefined : joinText(body);
  }
}

/**
 * A model request's body, for whichever fetch sends it (the provider fetch, or a wrapper such as
 * the tracing fetch around it). A fetch keeps its request's body for as long as the request is
 * out, which for a model call is the whole wait for the model; bytes given to it would be a copy
 * of the conversation held by every waiting turn. This stream holds the pieces only until they
 * are sent: `createProviderFetch` takes them without reading the stream and writes them joined,
 * as one string with its `content-length`; any other fetch reads it as an ordinary stream of bytes.
 */
export function providerRequestBody(body: EncodedBody): ReadableStream<Uint8Array> {
  const source = new BodySource(body);
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const joined = source.takeJoined();
        if (joined !== undefined) controller.enqueue(joined);
        controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  pendingBodies.set(stream, source);
  return stream;
}

/**
 * The `fetch` model requests are sent with (see postResponsesStream): undici's `request` API
 * under the `fetch` signature. WHATWG fetch was the largest part of a model call's cost in a
 * `perf` profile of the turn bench (18% of the service's CPU, more than the SDK itself): a
 * `Request` object with its WebIDL conversions, the body turned into a web stream, and the
 * answer read through a web `ReadableStream`. Here the request goes out as it was given and the
 * answer comes back as undici's Node stream.
 *
 * What the caller sees is still a `Response`: the status and headers, and for a failed request
 * the body text (at most 1 MiB), from which the SDK's `APIError` is made. A successful answer's
 * `Response` has no body of its own; its stream is read with `providerResponseBody`. The rest
 * is fetch's behaviour, where our error handling depends on it:
 * - a redirect is never followed; the request fails as fetch fails a `redirect: 'error'`
 *   request (`fetch failed`, caused by `unexpected redirect`);
 * - a request that cannot be sent fails with `TypeError('fetch failed')`, its cause the
 *   socket's own error, so `could not reach the model provider: fetch failed: connect
 *   ECONNREFUSED …` reads as before;
 * - an aborted signal rejects with the signal's reason, and stops a body being read.
 * undici's own header and body timeouts are off: the model client times the wait for headers
 * and the gaps in a stream (`requestTimeoutMs`), so there is one limit for both.
 * Anything this does not handle (a `Request` as input, a body that is not text or bytes) goes
 * to the global `fetch` unchanged.
 */
export function createProviderFetch(options: { readonly dispatcher?: Dispatcher } = {}): typeof fetch {
  // HTTP/1.1 as before undici 8, which offers HTTP/2 to TLS servers by default: one pool of
  // connections per origin is what the benchmarks measure; HTTP/2 would be a change of its own.
  const dispatcher = options.dispatcher ?? new Agent({ headersTimeout: 0, bodyTimeout: 0, allowH2: false });
  return async (input, init) => {
    const given = init?.body ?? undefined;
    const source = given instanceof ReadableStream ? pendingBodies.get(given) : undefined;
    if (input instanceof Request || !(given === undefined || typeof given === 'string' || given instanceof Uint8Array || source !== undefined)) return fetch(input, init);
    const signal = init?.signal ?? undefined;
    signal?.throwIfAborted();
    const headers = headerRecord(init?.headers);
    let body: string | Uint8Array | Readable | undefined = typeof given === 'string' || given instanceof Uint8Array ? given : undefined;
    if (source !== undefined) {
      headers['content-length'] = String(source.byteLength);
      body = joinedWhenSent(source);
    }
    let answer: Dispatcher.ResponseData;
    try {
      answer = await request(input, {
        dispatcher,
        method: init?.method ?? 'GET',
        headers,
        ...(body === undefined ? {} : { body }),
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      signal?.throwIfAborted();
      throw new TypeError('fetch failed', { cause: error });
    }
    const { statusCode } = answer;
    // A body let go before its end errors with undici's "Request aborted"; whoever reads it
    // hears of errors through its own listeners, and none of them may crash the process.
    answer.body.on('error', ignore);
    if (statusCode >= 300 && statusCode < 400) {
      answer.body.destroy();
      throw new TypeError('fetch failed', { cause: new TypeError(`unexpected redirect (HTTP ${statusCode})`) });
    }
    if (statusCode < 200 || statusCode > 599) {
      answer.body.destroy();
      throw new TypeError('fetch failed', { cause: new RangeError(`the provider answered with status ${statusCode}`) });
    }
    const answerHeaders = responseHeaders(answer.headers);
    if (statusCode >= 300) return new Response(await readErrorBody(answer.body), { status: statusCode, headers: answerHeaders });
    const response = new Response(null, { status: statusCode, headers: answerHeaders });
    streamedBodies.set(response, answer.body);
    return response;
  };
}

/**
 * A response's body: the Node stream of an answer from `createProviderFetch`, else the web
 * stream of any other fetch's (a test's, a wrapper's own).
 */
export function providerResponseBody(response: Response): Readable | ReadableStream<Uint8Array> | null {
  return streamedBodies.get(response) ?? response.body;
}

/**
 * The pieces as one string, made when undici writes the body and let go once written: undici
 * keeps a request's body until its answer has ended, so it is given this stream, which holds
 * nothing once it has been read, rather than the text. A string and not a buffer: the socket
 * encodes it into memory it frees as soon as the write is done, where a joined buffer (tens of
 * kilobytes a request) waits for V8 to collect it, and a thousand turns' requests piled up enough
 * of them that malloc kept their pages after the burst (see joinText).
 */
function joinedWhenSent(source: BodySource): Readable {
  // Object mode: the string is written as it is (undici takes the length from content-length).
  return new Readable({
    objectMode: true,
    read() {
      const text = source.takeText();
      if (text !== undefined) this.push(text);
      this.push(null);
    },
  });
}

function ignore(): void {
  // See where it is added.
}

function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  const record: Record<string, string> = {};
  if (headers === undefined) return record;
  for (const [name, value] of headers instanceof Headers ? headers : new Headers(headers)) record[name] = value;
  return record;
}

function responseHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    if (typeof value === 'string') headers.append(name, value);
    else for (const entry of value) headers.append(name, entry);
  }
  return headers;
}

/** A failed request's body, to read its error from; the connection is let go past the cap. */
async function readErrorBody(body: Readable): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    const room = MAX_ERROR_BODY_BYTES - size;
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    size += Math.min(chunk.length, room);
    if (size >= MAX_ERROR_BODY_BYTES) break;
  }
  return Buffer.concat(chunks, size);
}
