import type { FastifyPluginAsyncZod } from '@fastify/type-provider-zod';
import { z } from 'zod';
import { errorEnvelope, errorEnvelopeSchema } from '../src/http/error-envelope.js';
import type { TurnService } from '../src/turns/turn-service.js';

export interface OperationRoutesOptions {
  readonly service: TurnService;
}

/** Liveness and readiness probes. */
export const operationRoutes: FastifyPluginAsyncZod<OperationRoutesOptions> = async (app, { service }) => {
  app.get(
    '/healthz',
    { schema: { summary: 'Alive', tags: ['operations'], operationId: 'getHealth', response: { 200: z.object({ status: z.literal('ok') }) } } },
    () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Ready to take turns',
        description: '503 `shutting_down` while the server drains.',
        tags: ['operations'],
        operationId: 'getReadiness',
        response: { 200: z.object({ status: z.literal('ready'), runningTurns: z.number().int() }), 503: errorEnvelopeSchema },
      },
    },
    async (_request, reply) => {
      if (service.draining) return reply.code(503).send(errorEnvelope('shutting_down', 'the server is draining and takes no new turns'));
      return { status: 'ready' as const, runningTurns: service.runningCount };
    },
  );
};
