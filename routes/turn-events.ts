import type { FastifyPluginAsyncZod } from '@fastify/type-provider-zod';
import { z } from 'zod';
import { commonErrorResponses, errorEnvelopeSchema } from '../src/http/error-envelope.js';
import { EventStreamWriter } from '../src/http/event-stream-writer.js';
import { negotiateStreamFormat } from '../src/http/negotiate-stream-format.js';
import { ServiceError } from '../src/service-error.js';
import { collectingSink } from '../src/turns/follow-turn-events.js';
import { turnEventSchema } from '../src/events/turn-events.js';
import type { TurnService } from '../src/turns/turn-service.js';

export interface TurnEventRoutesOptions {
  readonly service: TurnService;
  readonly ssePingMs: number;
}

/** A seq as a client sends it back: decimal digits only (`0x10`, `1e3`, `''`, ` 5` are refused, not read as 16, 1000, 0, 5). */
const sequence = z
  .string()
  .regex(/^\d{1,16}$/, 'must be a non-negative decimal integer')
  .transform(Number)
  .pipe(z.number().int().max(Number.MAX_SAFE_INTEGER));

/** `GET /turns/:id/events`: replay from the start or after a seq, then the live tail. */
export const turnEventRoutes: FastifyPluginAsyncZod<TurnEventRoutesOptions> = async (app, { service, ssePingMs }) => {
  app.get(
    '/turns/:id/events',
    {
      schema: {
        summary: "A turn's events",
        description:
          'Replays the events after `Last-Event-ID` or `?after=N` (the larger wins; each a non-negative decimal integer), then streams live ones until the last. SSE by default (every answer starts with `retry:`), NDJSON for `application/x-ndjson`; `application/json` answers at once with the events stored so far. On a turn that has ended, the stream sends what is left and closes at once; when nothing is left (the seq is at or past the terminal event) the answer is `204`. Leaving this stream does not cancel the turn.',
        tags: ['turns'],
        operationId: 'getTurnEvents',
        params: z.object({ id: z.string().min(1).max(200) }),
        querystring: z.object({ after: sequence.optional() }),
        headers: z.object({ 'last-event-id': sequence.optional().describe('Resume after this seq (the `id:` of the last event received); the larger of it and `?after` wins.') }),
        response: {
          200: z.object({ events: z.array(turnEventSchema) }),
          204: z.null().describe('The turn has ended and nothing is stored after the given seq: do not reconnect.'),
          404: errorEnvelopeSchema,
          406: errorEnvelopeSchema,
          ...commonErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const format = negotiateStreamFormat(request.headers.accept);
      if (format === undefined) {
        throw new ServiceError({ statusCode: 406, code: 'not_acceptable', message: 'Accept text/event-stream, application/x-ndjson or application/json' });
      }
      const turnId = request.params.id;
      const afterSeq = Math.max(request.query.after ?? 0, request.headers['last-event-id'] ?? 0);
      // 404 for an unknown turn; 204 for one that has ended with nothing after afterSeq.
      if (await service.isOverAfter(turnId, afterSeq)) return reply.code(204).send(null);
      const controller = new AbortController();
      if (format === 'json') {
        const collected = collectingSink();
        await service.streamEvents({ turnId, afterSeq, follow: false, signal: controller.signal, sink: collected.sink });
        // Stored event text, served as is (already the schema's shape as JSON).
        const body = `{"events":[${collected.events.map((event) => event.json).join(',')}]}`;
        return reply.type('application/json; charset=utf-8').serializer((payload: unknown) => payload as string).send(body as never);
      }
      reply.hijack();
      const writer = new EventStreamWriter({ response: reply.raw, format, pingMs: ssePingMs, headers: { 'turn-id': turnId } });
      reply.raw.once('close', () => {
        writer.abandon();
        controller.abort();
      });
      try {
        await service.streamEvents({ turnId, afterSeq, follow: true, signal: controller.signal, sink: writer });
      } catch (error) {
        request.log.error({ err: error }, 'event stream failed');
      }
      writer.end();
      return reply;
    },
  );
};
