import type { FastifyPluginAsyncZod } from '@fastify/type-provider-zod';
import { z } from 'zod';
import { commonErrorResponses, errorEnvelopeSchema } from '../src/http/error-envelope.js';
import { idempotencyKeyHeader } from '../src/http/idempotency-key-header.js';
import { negotiateStreamFormat } from '../src/http/negotiate-stream-format.js';
import { collectReplayedTurn, streamReplayedTurn } from '../src/http/replay-turn.js';
import { watchClientDeparture } from '../src/http/client-departure.js';
import { collectOwnTurn, streamOwnTurn } from '../src/http/stream-turn.js';
import { traceHeadersOf } from '../src/http/trace-headers.js';
import { bindTurnToRequestLog } from '../src/http/turn-request-log.js';
import { streamOwnTurnAsUiMessages } from '../src/http/ui-message-stream.js';
import { ServiceError } from '../src/service-error.js';
import { turnRecordSchema, turnToolsSchema, turnWithEventsSchema } from '../src/turns/turn-record-schema.js';
import { turnRequestSchema } from '../src/turns/turn-request.js';
import { idempotencyScope } from '../src/turns/coordination/idempotency-key.js';
import type { TurnService } from '../src/turns/turn-service.js';

export interface TurnRoutesOptions {
  readonly service: TurnService;
  readonly ssePingMs: number;
  /** Idempotency keys are scoped to the bearer token when auth is on, to the server otherwise. */
  readonly authEnabled: boolean;
}

const startHeaders = z.looseObject({
  'idempotency-key': idempotencyKeyHeader('the turn it made'),
  'last-event-id': z
    .string()
    .regex(/^\d{1,15}$/, 'must be a non-negative decimal integer')
    .optional()
    .describe('On an idempotent retry that streams: replay only the stored events after this seq, then follow the turn live.'),
});

const turnParams = z.object({ id: z.string().min(1).max(200) });
const notAcceptable = () =>
  new ServiceError({ statusCode: 406, code: 'not_acceptable', message: 'Accept text/event-stream, application/x-ndjson or application/json' });

/** `POST /turns`, `GET /turns/:id`, `GET /turns/:id/tools`, `POST /turns/:id/cancel`. */
export const turnRoutes: FastifyPluginAsyncZod<TurnRoutesOptions> = async (app, { service, ssePingMs, authEnabled }) => {
  app.post(
    '/turns',
    {
      schema: {
        summary: 'Run one turn',
        description:
          'Assembles the turn\'s tools and runs the loop. By `Accept`: Server-Sent Events (`text/event-stream`, `*/*` or none), NDJSON (`application/x-ndjson`), both flushed as events happen; or `application/json`, which waits for the end and answers with the record and its events. The `turn-id` header names the turn. A streaming client that disconnects aborts the turn. With `Idempotency-Key`, a retry answers the turn the key made (in the `Accept` it asks for, header `idempotent-replayed: true`), `422 idempotency_key_reused` when the body differs. `multitask` decides what happens while the agent has a turn running: a queued turn streams `turn.queued` first, `409 agent_busy` when it may not wait.',
        tags: ['turns'],
        operationId: 'createTurn',
        body: turnRequestSchema,
        headers: startHeaders,
        response: {
          200: turnWithEventsSchema,
          406: errorEnvelopeSchema,
          409: errorEnvelopeSchema.describe('`agent_busy`: multitask `reject` while the agent has a turn running, or its queue is full.'),
          413: errorEnvelopeSchema,
          415: errorEnvelopeSchema,
          422: errorEnvelopeSchema.describe('`idempotency_key_reused`: the key already made a turn with another body.'),
          ...commonErrorResponses,
        },
        querystring: z.object({
          protocol: z
            .enum(['ui-message'])
            .optional()
            .describe('`ui-message`: stream the turn as the AI SDK UI message stream v1 (for `useChat`); needs `Accept: text/event-stream`.'),
        }),
      },
    },
    async (request, reply) => {
      // First, before anything slow: a client that leaves while the turn is planned is still seen.
      const departure = watchClientDeparture(reply.raw);
      const format = negotiateStreamFormat(request.headers.accept);
      if (format === undefined) throw notAcceptable();
      if (request.query.protocol === 'ui-message' && format !== 'sse') {
        throw new ServiceError({ statusCode: 406, code: 'not_acceptable', message: 'protocol=ui-message streams Server-Sent Events: Accept text/event-stream' });
      }
      const key = request.headers['idempotency-key'];
      const submission = await service.submitTurn(request.body, {
        traceHeaders: traceHeadersOf(request.headers),
        ...(key === undefined ? {} : { idempotency: { scope: idempotencyScope({ authEnabled, authorization: request.headers.authorization }), key } }),
      });
      bindTurnToRequestLog({ request, reply, turnId: submission.kind === 'replayed' ? submission.turnId : submission.run.id });
      if (submission.kind === 'replayed') {
        const { turnId } = submission;
        if (format !== 'json') {
          await streamReplayedTurn({ service, turnId, afterSeq: Number(request.headers['last-event-id'] ?? '0'), reply, format, pingMs: ssePingMs });
          return reply;
        }
        const events = await collectReplayedTurn({ service, turnId, reply });
        return { ...(await service.getTurn(turnId)), events };
      }
      const { run } = submission;
      if (request.query.protocol === 'ui-message') {
        await streamOwnTurnAsUiMessages({ run, service, reply, pingMs: ssePingMs, departure });
        return reply;
      }
      if (format !== 'json') {
        await streamOwnTurn({ run, service, reply, format, pingMs: ssePingMs, departure });
        return reply;
      }
      const events = await collectOwnTurn({ run, service, departure });
      const record = JSON.stringify(await service.getTurn(run.id));
      // The stored event text, spliced in as is (already the schema's shape as JSON).
      const body = `${record.slice(0, -1)},"events":[${events.map((event) => event.json).join(',')}]}`;
      return reply.header('turn-id', run.id).type('application/json; charset=utf-8').serializer((payload: unknown) => payload as string).send(body as never);
    },
  );

  app.get(
    '/turns/:id',
    { schema: { summary: 'A turn record', tags: ['turns'], operationId: 'getTurn', params: turnParams, response: { 200: turnRecordSchema, 404: errorEnvelopeSchema, ...commonErrorResponses } } },
    async (request) => service.getTurn(request.params.id),
  );

  app.get(
    '/turns/:id/tools',
    {
      schema: {
        summary: 'What a turn was given',
        description: 'The assembled tools, and the provider tool definitions exactly as they were sent.',
        tags: ['turns'],
        operationId: 'getTurnTools',
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
        description:
          'Ends the turn with `turn.cancelled` (reason `cancel_requested`) and answers 202 with its record; a queued turn ends without ever starting. Works through any replica: the one running the turn aborts it within a second, and the answer waits for that (up to 5 s, then it is the record as it stands).',
        tags: ['turns'],
        operationId: 'cancelTurn',
        params: turnParams,
        response: { 202: turnRecordSchema, 404: errorEnvelopeSchema, 409: errorEnvelopeSchema, ...commonErrorResponses },
      },
    },
    async (request, reply) => reply.code(202).send(await service.cancelTurn(request.params.id)),
  );
};
