import type { FastifyPluginAsyncZod } from '@fastify/type-provider-zod';
import { z } from 'zod';
import { commonErrorResponses, errorEnvelopeSchema } from '../src/http/error-envelope.js';
import { negotiateStreamFormat } from '../src/http/negotiate-stream-format.js';
import { collectOwnTurn, streamOwnTurn } from '../src/http/stream-turn.js';
import { traceHeadersOf } from '../src/http/trace-headers.js';
import { bindTurnToRequestLog } from '../src/http/turn-request-log.js';
import { streamOwnTurnAsUiMessages } from '../src/http/ui-message-stream.js';
import { ServiceError } from '../src/service-error.js';
import { turnRecordSchema, turnToolsSchema, turnWithEventsSchema } from '../src/turns/turn-record-schema.js';
import { turnRequestSchema } from '../src/turns/turn-request.js';
import type { TurnService } from '../src/turns/turn-service.js';

export interface TurnRoutesOptions {
  readonly service: TurnService;
  readonly ssePingMs: number;
}

const turnParams = z.object({ id: z.string().min(1).max(200) });
const notAcceptable = () =>
  new ServiceError({ statusCode: 406, code: 'not_acceptable', message: 'Accept text/event-stream, application/x-ndjson or application/json' });

/** `POST /turns`, `GET /turns/:id`, `GET /turns/:id/tools`, `POST /turns/:id/cancel`. */
export const turnRoutes: FastifyPluginAsyncZod<TurnRoutesOptions> = async (app, { service, ssePingMs }) => {
  app.post(
    '/turns',
    {
      schema: {
        summary: 'Run one turn',
        description:
          'Assembles the turn\'s tools and runs the loop. By `Accept`: Server-Sent Events (`text/event-stream`, `*/*` or none), NDJSON (`application/x-ndjson`), both flushed as events happen; or `application/json`, which waits for the end and answers with the record and its events. The `turn-id` header names the turn. A streaming client that disconnects aborts the turn.',
        tags: ['turns'],
        body: turnRequestSchema,
        querystring: z.object({
          protocol: z
            .enum(['ui-message'])
            .optional()
            .describe('`ui-message`: stream the turn as the AI SDK UI message stream v1 (for `useChat`); needs `Accept: text/event-stream`.'),
        }),
        response: { 200: turnWithEventsSchema, 406: errorEnvelopeSchema, 413: errorEnvelopeSchema, 415: errorEnvelopeSchema, ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const format = negotiateStreamFormat(request.headers.accept);
      if (format === undefined) throw notAcceptable();
      if (request.query.protocol === 'ui-message' && format !== 'sse') {
        throw new ServiceError({ statusCode: 406, code: 'not_acceptable', message: 'protocol=ui-message streams Server-Sent Events: Accept text/event-stream' });
      }
      const run = await service.startTurn(request.body, { traceHeaders: traceHeadersOf(request.headers) });
      bindTurnToRequestLog({ request, reply, turnId: run.id });
      if (request.query.protocol === 'ui-message') {
        streamOwnTurnAsUiMessages({ run, reply, pingMs: ssePingMs });
        return reply;
      }
      if (format !== 'json') {
        streamOwnTurn({ run, reply, format, pingMs: ssePingMs });
        return reply;
      }
      const events = await collectOwnTurn({ run, reply });
      return { ...(await service.getTurn(run.id)), events };
    },
  );

  app.get(
    '/turns/:id',
    { schema: { summary: 'A turn record', tags: ['turns'], params: turnParams, response: { 200: turnRecordSchema, 404: errorEnvelopeSchema, ...commonErrorResponses } } },
    async (request) => service.getTurn(request.params.id),
  );

  app.get(
    '/turns/:id/tools',
    {
      schema: {
        summary: 'What a turn was given',
        description: 'The assembled tools, and the provider tool definitions exactly as they were sent.',
        tags: ['turns'],
        params: turnParams,
        response: { 200: turnToolsSchema, 404: errorEnvelopeSchema, ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const tools = await service.getTurnTools(request.params.id);
      const first = tools.providerTools[0]?.json ?? '[]';
      const byIteration = tools.providerTools.map((entry) => `{"iteration":${entry.iteration},"providerTools":${entry.json}}`).join(',');
      // Spliced from the stored text, not re-serialised: the provider tools are served byte for byte as sent.
      const body = `{"turnId":${JSON.stringify(tools.turnId)},"kind":${JSON.stringify(tools.kind)},"tools":${tools.toolsJson},"unavailableSources":${tools.unavailableJson},"providerTools":${first},"providerToolsByIteration":[${byIteration}]}`;
      // The typed payload is the schema's; this one is its exact JSON text, so the cast is sound.
      return reply.type('application/json; charset=utf-8').serializer((payload: unknown) => payload as string).send(body as never);
    },
  );

  app.post(
    '/turns/:id/cancel',
    {
      schema: {
        summary: 'Cancel a running turn',
        description: 'Ends the turn with `turn.cancelled` (reason `cancel_requested`) and answers 202 with its record.',
        tags: ['turns'],
        params: turnParams,
        response: { 202: turnRecordSchema, 404: errorEnvelopeSchema, 409: errorEnvelopeSchema, ...commonErrorResponses },
      },
    },
    async (request, reply) => reply.code(202).send(await service.cancelTurn(request.params.id)),
  );
};
