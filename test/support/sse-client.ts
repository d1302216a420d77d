import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';

export interface SseMessage {
  readonly id?: string;
  readonly event?: string;
  readonly data: string;
}

export interface OpenStream {
  readonly response: IncomingMessage;
  readonly request: ClientRequest;
  /** Parsed SSE messages so far (comments excluded). */
  readonly messages: SseMessage[];
  /** Comment lines seen (": ping"). */
  readonly comments: string[];
  /** Values of `retry:` fields seen. */
  readonly retries: string[];
  /** Resolves with the first message for which `predicate` holds (already seen ones count). */
  waitFor(predicate: (message: SseMessage) => boolean, timeoutMs?: number): Promise<SseMessage>;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  /** Destroys the socket, as a client that vanishes. */
  destroy(): void;
}

/**
 * A raw SSE client over a real socket: writes a request, parses `id:`/`event:`/`data:` frames
 * as they arrive, and can vanish mid-stream. No library, so the framing itself is under test.
 */
export function openStream(options: {
  url: string;
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
}): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const request = httpRequest(options.url, {
      method: options.method ?? 'POST',
      headers: {
        accept: 'text/event-stream',
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      const messages: SseMessage[] = [];
      const comments: string[] = [];
      const retries: string[] = [];
      const waiters: { predicate: (message: SseMessage) => boolean; resolve: (message: SseMessage) => void }[] = [];
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        // Split once per chunk (not slice per frame): a megabyte chunk of small frames stays linear.
        const frames = (buffer + chunk).split('\n\n');
        buffer = frames.pop() ?? '';
        for (const frame of frames) {
          const message: { id?: string; event?: string; data: string } = { data: '' };
          let isComment = true;
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) {
              comments.push(line);
              continue;
            }
            isComment = false;
            const colon = line.indexOf(':');
            const field = line.slice(0, colon);
            const value = line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id') message.id = value;
            else if (field === 'event') message.event = value;
            else if (field === 'data') message.data += value;
            else if (field === 'retry') retries.push(value);
          }
          // A block without data (e.g. only `retry:`) dispatches no message, as in EventSource.
          if (!isComment && message.data !== '') {
            messages.push(message);
            for (const waiter of [...waiters]) {
              if (waiter.predicate(message)) {
                waiters.splice(waiters.indexOf(waiter), 1);
                waiter.resolve(message);
              }
            }
          }
        }
      });
      const ended = new Promise<void>((resolveEnd) => {
        response.on('end', resolveEnd);
        response.on('close', resolveEnd);
      });
      resolve({
        response,
        request,
        messages,
        comments,
        retries,
        ended,
        waitFor(predicate, timeoutMs = 10_000) {
          const seen = messages.find(predicate);
          if (seen !== undefined) return Promise.resolve(seen);
          return new Promise((resolveWait, rejectWait) => {
            const timer = setTimeout(() => {
              rejectWait(new Error(`no matching SSE message within ${timeoutMs} ms; got ${messages.length} messages, the last: ${messages.slice(-5).map((m) => m.event).join(', ')}`));
            }, timeoutMs);
            waiters.push({
              predicate,
              resolve: (message) => {
                clearTimeout(timer);
                resolveWait(message);
              },
            });
          });
        },
        destroy() {
          request.destroy();
          response.destroy();
        },
      });
    });
    if (payload !== undefined) request.write(payload);
    request.end();
  });
}

/** Parses the `data` of every message as JSON. */
export function eventsOf(stream: OpenStream): Record<string, unknown>[] {
  return stream.messages.map((message) => JSON.parse(message.data) as Record<string, unknown>);
}
