import type { FastifyReply } from 'fastify';
import type { StoredEvent } from '../store/turn-record.js';
import type { EventSink } from '../turns/follow-turn-events.js';
import type { TurnEvent } from '../events/turn-events.js';
import type { TurnRun } from '../turns/turn-run.js';
import type { TurnService } from '../turns/turn-service.js';
import { cancelOnDeparture } from './cancel-on-departure.js';
import { UiMessageChunks } from './to-ui-message-chunks.js';

/**
 * Streams a turn started by this request as the AI SDK UI message stream v1 (what `useChat`
 * reads): SSE `data:` lines of JSON chunks, then `data: [DONE]`, with the header
 * `x-vercel-ai-ui-message-stream: v1` and the usual `turn-id`. The events come the same way as
 * on the native stream (TurnService.streamEvents: stored first, bounded per consumer), and a
 * client that goes away before the end aborts the turn, as there.
 */
export async function streamOwnTurnAsUiMessages(options: {
  readonly run: TurnRun;
  readonly service: TurnService;
  readonly reply: FastifyReply;
  readonly pingMs: number;
  readonly departure: AbortSignal;
}): Promise<void> {
  const { run, reply } = options;
  reply.hijack();
  const response = reply.raw;
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
    connection: 'keep-alive',
    'x-vercel-ai-ui-message-stream': 'v1',
    'turn-id': run.id,
  });
  response.flushHeaders();
  const following = new AbortController();
  let ended = false;
  const write = (text: string): void => {
    if (!ended && !response.destroyed) response.write(text);
  };
  const ping = setInterval(() => {
    write(': ping\n\n');
  }, options.pingMs);
  ping.unref();
  const stopWatching = cancelOnDeparture({
    departure: options.departure,
    run,
    following,
    abandon: () => {
      ended = true;
      clearInterval(ping);
    },
  });
  const translator = new UiMessageChunks();
  const sink: EventSink = {
    write: (stored: StoredEvent) => {
      const { chunks, done } = translator.translate(JSON.parse(stored.json) as TurnEvent);
      // One write per event: its chunks belong together.
      if (chunks.length > 0) write(chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join(''));
      if (done) write('data: [DONE]\n\n');
      return !response.writableNeedDrain;
    },
    drained: () =>
      new Promise((resolve) => {
        if (!response.writableNeedDrain || response.destroyed) resolve();
        else response.once('drain', resolve).once('close', resolve);
      }),
  };
  try {
    await options.service.streamEvents({ turnId: run.id, afterSeq: 0, follow: true, signal: following.signal, sink });
  } catch (error) {
    reply.log.error({ err: error, turnId: run.id }, 'ui message stream failed');
  }
  stopWatching();
  clearInterval(ping);
  ended = true;
  if (!response.destroyed) response.end();
}
