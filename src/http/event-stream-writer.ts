import type { ServerResponse } from 'node:http';
import type { StoredEvent } from '../store/turn-record.js';
import type { EventSink } from '../turns/follow-turn-events.js';

/** Bytes a consumer may have waiting in its socket before it counts as behind. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** What a reconnecting EventSource waits before it comes back (the SSE `retry:` field). */
const SSE_RETRY_MS = 3_000;

/**
 * Writes turn events to a raw response as Server-Sent Events or NDJSON, one write per event
 * (flushed as it happens), with an SSE comment ping on an interval so proxies keep the
 * connection open while the turn is quiet. Every SSE answer starts with `retry:`. It is an
 * EventSink: `write` says when the client holds a megabyte unread, and `drained` when it has
 * taken it, so a slow reader is fed from the store at its own pace instead of from memory.
 */
export class EventStreamWriter implements EventSink {
  readonly #response: ServerResponse;
  readonly #format: 'sse' | 'ndjson';
  readonly #ping: NodeJS.Timeout | undefined;
  #ended = false;
  /** Text written in this tick, sent as one chunk at the end of it. */
  #buffer = '';

  constructor(options: { response: ServerResponse; format: 'sse' | 'ndjson'; pingMs: number; headers: Record<string, string> }) {
    this.#response = options.response;
    this.#format = options.format;
    options.response.writeHead(200, {
      'content-type': options.format === 'sse' ? 'text/event-stream; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      // Stop proxies (nginx and friends) and compressors from holding events back.
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
      ...options.headers,
    });
    options.response.flushHeaders();
    if (options.format === 'sse') {
      this.#write(`retry: ${SSE_RETRY_MS}\n\n`);
      this.#ping = setInterval(() => {
        this.#write(': ping\n\n');
      }, options.pingMs);
      this.#ping.unref();
    }
  }

  /** True once the stream was ended by us (not by the client going away). */
  get ended(): boolean {
    return this.#ended;
  }

  /** A stored event: a turn's, or another stream's with the same shape (a workflow run's). */
  write(event: Pick<StoredEvent, 'seq' | 'json'> & { readonly type: string }): boolean {
    if (this.#format === 'sse') this.#write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${event.json}\n\n`);
    else this.#write(`${event.json}\n`);
    if (this.#buffer.length + this.#response.writableLength < MAX_BUFFERED_BYTES) return true;
    this.#flush();
    return false;
  }

  drained(): Promise<void> {
    this.#flush();
    const response = this.#response;
    if (this.#ended || response.destroyed || !response.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        response.off('drain', done);
        response.off('close', done);
        resolve();
      };
      response.on('drain', done);
      response.on('close', done);
    });
  }

  end(): void {
    if (this.#ended) return;
    this.#flush();
    this.#ended = true;
    if (this.#ping !== undefined) clearInterval(this.#ping);
    if (!this.#response.destroyed) this.#response.end();
  }

  /** Stops writing because the client is gone. */
  abandon(): void {
    this.#ended = true;
    if (this.#ping !== undefined) clearInterval(this.#ping);
  }

  /** Events stored together are delivered together: one socket write for the batch. */
  #write(chunk: string): void {
    if (this.#ended || this.#response.destroyed) return;
    if (this.#buffer === '') {
      queueMicrotask(() => {
        this.#flush();
      });
    }
    this.#buffer += chunk;
  }

  #flush(): void {
    if (this.#buffer === '' || this.#response.destroyed) return;
    const chunk = this.#buffer;
    this.#buffer = '';
    this.#response.write(chunk);
  }
}
