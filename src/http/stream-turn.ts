import type { FastifyReply } from 'fastify';
import type { StoredEvent } from '../store/turn-store.js';
import type { TurnEvent } from '../turns/turn-events.js';
import { TERMINAL_EVENT_TYPES } from '../turns/turn-events.js';
import type { TurnRun } from '../turns/turn-run.js';
import { EventStreamWriter } from './event-stream-writer.js';

/**
 * Streams a turn started by this request as SSE or NDJSON. When the client goes away before
 * the end, the turn is aborted. The response's `close` is the signal: the request's fires as
 * soon as the body has been read, long before the client leaves.
 */
export function streamOwnTurn(options: {
  run: TurnRun;
  reply: FastifyReply;
  format: 'sse' | 'ndjson';
  pingMs: number;
  /**
   * Follows the turn from the store after it parked for approval (it goes on later, here or on
   * another replica). From then on this stream only follows: leaving it no longer cancels.
   */
  followParked?: (options: { afterSeq: number; signal: AbortSignal; onEvent: (stored: StoredEvent) => void }) => Promise<void>;
}): void {
  const { run, reply, followParked } = options;
  reply.hijack();
  const writer = new EventStreamWriter({ response: reply.raw, format: options.format, pingMs: options.pingMs, headers: { 'turn-id': run.id } });
  const following = new AbortController();
  let lastSeq = 0;
  const unsubscribe = run.subscribe(0, (event, stored) => {
    lastSeq = stored.seq;
    writer.write(stored);
    if (TERMINAL_EVENT_TYPES.has(event.type)) writer.end();
  });
  void run.done.then(async () => {
    if (!run.suspended || writer.ended) return;
    unsubscribe();
    if (followParked === undefined) {
      writer.end();
      return;
    }
    await followParked({
      afterSeq: lastSeq,
      signal: following.signal,
      onEvent: (stored) => {
        writer.write(stored);
      },
    }).catch(() => undefined);
    writer.end();
  });
  reply.raw.once('close', () => {
    following.abort();
    if (writer.ended) return;
    writer.abandon();
    unsubscribe();
    if (!run.suspended) run.cancel('client_disconnected');
  });
}

/**
 * Waits for the end of a turn started by this request and collects its events, for clients
 * that asked for `application/json`. A client that leaves first still aborts the turn.
 */
export async function collectOwnTurn(options: { run: TurnRun; reply: FastifyReply }): Promise<TurnEvent[]> {
  const { run, reply } = options;
  const events: TurnEvent[] = [];
  const unsubscribe = run.subscribe(0, (event) => {
    events.push(event);
  });
  const onClose = () => {
    if (!run.finished) run.cancel('client_disconnected');
  };
  reply.raw.once('close', onClose);
  await run.done;
  unsubscribe();
  reply.raw.off('close', onClose);
  void reply.header('turn-id', run.id);
  return events;
}
