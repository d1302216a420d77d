import type { FastifyReply } from 'fastify';
import { collectingSink } from '../turns/follow-turn-events.js';
import type { TurnEvent } from '../events/turn-events.js';
import type { TurnService } from '../turns/turn-service.js';
import { EventStreamWriter } from './event-stream-writer.js';

/** Marks the answer to a retried idempotent request: it is the turn the first request made. */
const REPLAYED_HEADERS = { 'idempotent-replayed': 'true' } as const;

/**
 * Answers a retried idempotent `POST /turns` with the turn its key made, from whichever
 * replica runs it: the stored events after `afterSeq`, then the live tail to the end.
 * Leaving this stream does not cancel the turn: the request that made it owns it.
 */
export async function streamReplayedTurn(options: {
  readonly service: TurnService;
  readonly turnId: string;
  readonly afterSeq: number;
  readonly reply: FastifyReply;
  readonly format: 'sse' | 'ndjson';
  readonly pingMs: number;
}): Promise<void> {
  const { reply, turnId } = options;
  reply.hijack();
  const writer = new EventStreamWriter({ response: reply.raw, format: options.format, pingMs: options.pingMs, headers: { 'turn-id': turnId, ...REPLAYED_HEADERS } });
  const controller = new AbortController();
  reply.raw.once('close', () => {
    writer.abandon();
    controller.abort();
  });
  try {
    await options.service.streamEvents({ turnId, afterSeq: options.afterSeq, follow: true, signal: controller.signal, sink: writer });
  } catch (error) {
    reply.log.error({ err: error, turnId }, 'replaying a turn failed');
  }
  writer.end();
}

/** The JSON answer to a retried idempotent `POST /turns`: waits for the turn's end, like the first request. */
export async function collectReplayedTurn(options: { readonly service: TurnService; readonly turnId: string; readonly reply: FastifyReply }): Promise<TurnEvent[]> {
  const { reply, turnId } = options;
  const controller = new AbortController();
  const onClose = () => {
    controller.abort();
  };
  reply.raw.once('close', onClose);
  const { sink, events } = collectingSink();
  try {
    await options.service.streamEvents({ turnId, afterSeq: 0, follow: true, signal: controller.signal, sink });
  } finally {
    reply.raw.off('close', onClose);
  }
  void reply.header('turn-id', turnId).header('idempotent-replayed', REPLAYED_HEADERS['idempotent-replayed']);
  // Stored text of events that were validated when they were made.
  return events.map((event) => JSON.parse(event.json) as TurnEvent);
}
