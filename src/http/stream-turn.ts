import type { FastifyReply } from 'fastify';
import type { StoredEvent } from '../store/turn-record.js';
import { collectingSink } from '../turns/follow-turn-events.js';
import type { TurnRun } from '../turns/turn-run.js';
import type { TurnService } from '../turns/turn-service.js';
import { cancelOnDeparture } from './cancel-on-departure.js';
import { EventStreamWriter } from './event-stream-writer.js';

/**
 * Streams a turn started by this request as SSE or NDJSON, from the store's sequence (see
 * TurnService.streamEvents), until its terminal event. When the client goes away before the
 * end — even before the turn had started — the turn is aborted. `departure` comes from
 * watchClientDeparture, taken when the request arrived.
 */
export async function streamOwnTurn(options: { run: TurnRun; service: TurnService; reply: FastifyReply; format: 'sse' | 'ndjson'; pingMs: number; departure: AbortSignal }): Promise<void> {
  const { run, reply } = options;
  reply.hijack();
  const writer = new EventStreamWriter({ response: reply.raw, format: options.format, pingMs: options.pingMs, headers: { 'turn-id': run.id } });
  const controller = new AbortController();
  const stopWatching = cancelOnDeparture({
    departure: options.departure,
    run,
    following: controller,
    abandon: () => {
      writer.abandon();
    },
  });
  try {
    await options.service.streamEvents({ turnId: run.id, afterSeq: 0, follow: true, signal: controller.signal, sink: writer });
  } catch (error) {
    reply.log.error({ err: error, turnId: run.id }, 'turn stream failed');
  }
  stopWatching();
  writer.end();
}

/**
 * Waits for the end of a turn started by this request and reads its stored events, for
 * clients that asked for `application/json`. A client that leaves first still aborts the turn.
 */
export async function collectOwnTurn(options: { run: TurnRun; service: TurnService; departure: AbortSignal }): Promise<StoredEvent[]> {
  const { run } = options;
  const stopWatching = cancelOnDeparture({ departure: options.departure, run });
  await run.done;
  stopWatching();
  const collected = collectingSink();
  await options.service.streamEvents({ turnId: run.id, afterSeq: 0, follow: false, signal: new AbortController().signal, sink: collected.sink });
  return collected.events;
}
