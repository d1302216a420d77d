import type { FastifyReply } from 'fastify';
import type { TurnRun } from '../turns/turn-run.js';
import { UiMessageChunks } from './to-ui-message-chunks.js';

/**
 * Streams a turn started by this request as the AI SDK UI message stream v1 (what `useChat`
 * reads): SSE `data:` lines of JSON chunks, then `data: [DONE]`, with the header
 * `x-vercel-ai-ui-message-stream: v1` and the usual `turn-id`. A client that goes away before
 * the end aborts the turn, as on the native stream.
 */
export function streamOwnTurnAsUiMessages(options: { readonly run: TurnRun; readonly reply: FastifyReply; readonly pingMs: number }): void {
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
  let ended = false;
  const write = (text: string): void => {
    if (!ended && !response.destroyed) response.write(text);
  };
  const ping = setInterval(() => {
    write(': ping\n\n');
  }, options.pingMs);
  ping.unref();
  const translator = new UiMessageChunks();
  const unsubscribe = run.subscribe(0, (event) => {
    const { chunks, done } = translator.translate(event);
    // One write per event: its chunks belong together.
    if (chunks.length > 0) write(chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join(''));
    if (done) {
      write('data: [DONE]\n\n');
      ended = true;
      clearInterval(ping);
      if (!response.destroyed) response.end();
    }
  });
  response.once('close', () => {
    clearInterval(ping);
    if (ended) return;
    ended = true;
    unsubscribe();
    run.cancel('client_disconnected');
  });
}
