import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { buildResponseFrames, type FakeStreamStep } from './fake-responses-events.js';
import { noteClientClose } from './note-client-close.js';

export type { FakeFunctionCall, FakeStreamStep } from './fake-responses-events.js';

/** An HTTP error answer: the status, a JSON `{error:{message,type,code,param}}` body, headers. */
export interface FakeErrorStep {
  readonly status: number;
  readonly error?: { readonly message?: string; readonly type?: string; readonly code?: string | null };
  /** A raw body instead of the JSON error. */
  readonly body?: string;
  /** Seconds (or an HTTP date) for `retry-after`. */
  readonly retryAfter?: number | string;
  readonly retryAfterMs?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly headersDelayMs?: number;
}

/** Destroys the connection before any answer (a reset). */
export interface FakeResetStep {
  readonly reset: true;
}

export type FakeStep = FakeStreamStep | FakeErrorStep | FakeResetStep;
/** A step, or a function choosing the step from the request (for benchmarks and echo tests). */
export type FakeStepSource = FakeStep | ((request: FakeRequest) => FakeStep);

/** The parts of a Responses request body the tests look at; the rest is there too. */
export interface FakeRequestBody {
  readonly model?: unknown;
  readonly instructions?: unknown;
  readonly input?: unknown;
  readonly tools?: unknown;
  readonly tool_choice?: unknown;
  readonly store?: unknown;
  readonly stream?: unknown;
  readonly parallel_tool_calls?: unknown;
  readonly [field: string]: unknown;
}

export interface FakeExchangeEnd {
  /** `client-disconnected`: the client went away before the response was over. */
  readonly how: 'completed' | 'client-disconnected' | 'server-destroyed';
  /** `performance.now()` when the exchange ended; for a client that left, when its close was first read (the socket's end or error). */
  readonly atMs: number;
}

export interface FakeRequest {
  /** 0 for the first request this provider received. */
  readonly index: number;
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The body exactly as received (empty when `recordRequests` is off). */
  readonly rawBody: string;
  readonly body: FakeRequestBody;
  /** Settles when the exchange is over, saying how. */
  readonly ended: Promise<FakeExchangeEnd>;
}

export interface FakeResponsesProvider {
  /** e.g. `http://127.0.0.1:41234/v1`, for the client's `baseUrl`. */
  readonly baseUrl: string;
  /** Every request received, in order (empty when `recordRequests` is off). */
  readonly requests: readonly FakeRequest[];
  readonly requestCount: number;
  /** Requests whose client went away before their response was over. */
  readonly disconnects: readonly FakeRequest[];
  /** Queues steps; each request takes the next one. */
  enqueue(...steps: FakeStepSource[]): void;
  /** The step for requests that find the queue empty (default: a 400 naming the mistake). */
  setDefault(step: FakeStepSource | undefined): void;
  /** Resolves once `count` requests have arrived, with the `count`-th. */
  waitForRequest(count: number): Promise<FakeRequest>;
  /** Resolves once `count` clients have gone away mid-response, with the `count`-th. */
  waitForDisconnect(count?: number): Promise<FakeRequest>;
  /** Stops listening and destroys every connection; timers are cleared, nothing leaks. */
  close(): Promise<void>;
}

export interface FakeResponsesProviderOptions {
  /** Keep each request (body included); turn off for long benchmarks. Default true. */
  readonly recordRequests?: boolean;
  /**
   * How long a kept-alive connection may idle before the server closes it; Node's default, 5 s,
   * when unset. A provider's own is usually a minute or more; at 5 s, a client whose event loop
   * lags by most of a second can send on a connection just as the server closes it.
   */
  readonly keepAliveTimeoutMs?: number;
}

/** An answer the test lets go: give `answered` as a step's `headersAfter`, then call `answer`. */
export function heldAnswer(): { readonly answered: Promise<void>; readonly answer: () => void } {
  let answer: () => void = () => undefined;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  return { answered, answer };
}

interface Waiter {
  readonly count: number;
  readonly resolve: (request: FakeRequest) => void;
}

/**
 * A real HTTP server on 127.0.0.1 that speaks the OpenAI Responses streaming protocol from
 * a queue of scripted steps.
 */
export async function startFakeResponsesProvider(options: FakeResponsesProviderOptions = {}): Promise<FakeResponsesProvider> {
  const recordRequests = options.recordRequests ?? true;
  const queue: FakeStepSource[] = [];
  let fallback: FakeStepSource | undefined;
  const requests: FakeRequest[] = [];
  const disconnects: FakeRequest[] = [];
  const requestWaiters: Waiter[] = [];
  const disconnectWaiters: Waiter[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  let requestCount = 0;
  let idCounter = 0;
  let closing = false;
  let lastRequest: FakeRequest | undefined;
  const settleRequestWaiters = (): void => {
    for (const waiter of [...requestWaiters]) {
      const match = requests[waiter.count - 1] ?? lastRequest;
      if (waiter.count <= requestCount && match !== undefined) {
        requestWaiters.splice(requestWaiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  };
  const newId = (prefix: string): string => `${prefix}_${(idCounter += 1).toString(36).padStart(6, '0')}`;


  const handle = (incoming: IncomingMessage, res: ServerResponse, rawBody: string): void => {
    const index = requestCount;
    requestCount += 1;
    let destroyedByServer = false;
    let resolveEnded: (end: FakeExchangeEnd) => void = () => undefined;
    const ended = new Promise<FakeExchangeEnd>((resolve) => (resolveEnded = resolve));
    const request: FakeRequest = {
      index,
      method: incoming.method ?? '',
      url: incoming.url ?? '',
      headers: incoming.headers,
      rawBody: recordRequests ? rawBody : '',
      body: parseBody(rawBody),
      ended,
    };
    // This exchange's pending timers: dropped as soon as its connection is gone.
    const pending = new Set<NodeJS.Timeout>();
    const later = (ms: number, action: () => void): void => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        pending.delete(timer);
        action();
      }, ms);
      timers.add(timer);
      pending.add(timer);
    };
    const clientClosedAt = noteClientClose(incoming, res);
    res.on('close', () => {
      for (const timer of pending) {
        clearTimeout(timer);
        timers.delete(timer);
      }
      const how = res.writableFinished ? 'completed' : destroyedByServer || closing ? 'server-destroyed' : 'client-disconnected';
      if (how === 'client-disconnected') {
        disconnects.push(request);
        settle(disconnectWaiters, disconnects);
      }
      resolveEnded({ how, atMs: how === 'client-disconnected' ? (clientClosedAt() ?? performance.now()) : performance.now() });
    });
    if (recordRequests) requests.push(request);
    lastRequest = request;
    settleRequestWaiters();

    if (incoming.method !== 'POST' || !(incoming.url ?? '').replace(/\?.*$/, '').endsWith('/responses')) {
      sendError(res, { status: 404, error: { message: `fake provider: no route for ${incoming.method ?? ''} ${incoming.url ?? ''}`, type: 'invalid_request_error' } });
      return;
    }
    const source = queue.shift() ?? fallback;
    if (source === undefined) {
      sendError(res, { status: 400, error: { message: `fake provider: no step queued for request #${index + 1}`, type: 'invalid_request_error', code: 'no_step' } });
      return;
    }
    const step = typeof source === 'function' ? source(request) : source;
    const destroy = (): void => {
      destroyedByServer = true;
      res.socket?.destroy();
    };
    if ('reset' in step) {
      destroy();
    } else if ('status' in step) {
      const send = (): void => { sendError(res, step); };
      if (step.headersDelayMs === undefined) send();
      else later(step.headersDelayMs, send);
    } else {
      const responseId = newId('resp');
      const frames = buildResponseFrames(step, {
        responseId,
        model: typeof request.body.model === 'string' ? request.body.model : 'fake-model',
        toolChoice: request.body.tool_choice,
        requestBytes: Buffer.byteLength(rawBody),
        newId,
      });
      const stream = (): void => { streamFrames(res, `req_${responseId}`, step, frames, later, destroy); };
      const answer = (): void => {
        if (step.headersDelayMs === undefined) stream();
        else later(step.headersDelayMs, stream);
      };
      if (step.headersAfter === undefined) answer();
      else void Promise.resolve(step.headersAfter).then(() => { if (!res.destroyed && !closing) answer(); });
    }
  };

  const server = createServer((incoming, res) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => { handle(incoming, res, Buffer.concat(chunks).toString('utf8')); });
  });
  if (options.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = options.keepAliveTimeoutMs;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => { resolve(); });
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get requestCount() {
      return requestCount;
    },
    disconnects,
    enqueue: (...steps) => {
      queue.push(...steps);
    },
    setDefault: (step) => {
      fallback = step;
    },
    waitForRequest: (count) =>
      new Promise((resolve) => {
        requestWaiters.push({ count, resolve });
        settleRequestWaiters();
      }),
    waitForDisconnect: (count = 1) =>
      new Promise((resolve) => {
        disconnectWaiters.push({ count, resolve });
        settle(disconnectWaiters, disconnects);
      }),
    close: async () => {
      closing = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => { resolve(); }));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** Writes the frames, pausing between them if asked, and stops where the step says. */
function streamFrames(
  res: ServerResponse,
  requestId: string,
  step: FakeStreamStep,
  frames: readonly string[],
  later: (ms: number, action: () => void) => void,
  destroy: () => void,
): void {
  const cut = cutPoint(step, frames.length);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-request-id': requestId,
    ...step.headers,
  });
  const stopAt = cut === undefined ? frames.length : cut.afterEvents;
  const finish = (): void => {
    if (cut === undefined || cut.how === 'endEarly') res.end();
    else if (cut.how === 'destroy') destroy();
    // `hang`: leave the stream open; the client's going away closes it.
  };
  const delay = step.eventDelayMs ?? 0;
  if (delay === 0) {
    const text = frames.slice(0, stopAt).join('');
    if (cut?.how === 'destroy') res.write(text, finish);
    else if (text === '') {
      res.flushHeaders();
      finish();
    } else if (cut === undefined || cut.how === 'endEarly') res.end(text);
    else res.write(text);
    return;
  }
  res.flushHeaders();
  const writeFrom = (index: number): void => {
    if (res.destroyed) return;
    if (index >= stopAt) {
      if (cut?.how === 'destroy') res.write('', finish);
      else finish();
      return;
    }
    res.write(frames[index]);
    later(delay, () => { writeFrom(index + 1); });
  };
  writeFrom(0);
}

function cutPoint(step: FakeStreamStep, frameCount: number): { how: 'hang' | 'destroy' | 'endEarly'; afterEvents: number } | undefined {
  for (const how of ['hang', 'destroy', 'endEarly'] as const) {
    const value = step[how];
    if (value === undefined || value === false) continue;
    const afterEvents = value === true ? frameCount - 1 : Math.min(value.afterEvents, frameCount);
    return { how, afterEvents };
  }
  return undefined;
}

function sendError(res: ServerResponse, step: FakeErrorStep): void {
  const body =
    step.body ??
    JSON.stringify({
      error: {
        message: step.error?.message ?? `fake provider error ${step.status}`,
        type: step.error?.type ?? (step.status >= 500 ? 'server_error' : 'invalid_request_error'),
        param: null,
        code: step.error?.code ?? null,
      },
    });
  res.writeHead(step.status, {
    'content-type': 'application/json',
    ...(step.retryAfter === undefined ? {} : { 'retry-after': String(step.retryAfter) }),
    ...(step.retryAfterMs === undefined ? {} : { 'retry-after-ms': String(step.retryAfterMs) }),
    ...step.headers,
  });
  res.end(body);
}

function parseBody(rawBody: string): FakeRequestBody {
  try {
    const parsed: unknown = JSON.parse(rawBody);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as FakeRequestBody) : {};
  } catch {
    return {};
  }
}

function settle(waiters: Waiter[], list: readonly FakeRequest[]): void {
  for (const waiter of [...waiters]) {
    const match = list[waiter.count - 1];
    if (match !== undefined) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(match);
    }
  }
}
