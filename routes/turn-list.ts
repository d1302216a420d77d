import type { FastifyPluginAsyncZod } from '@fastify/type-provider-zod';
import { z } from 'zod';
import { commonErrorResponses } from '../src/http/error-envelope.js';
import { turnRecordSchema, turnStatusSchema } from '../src/turns/turn-record-schema.js';
import { AGENT_ID_PATTERN } from '../src/turns/turn-request.js';
import type { TurnService } from '../src/turns/turn-service.js';

export interface TurnListRoutesOptions {
  readonly service: TurnService;
}

/** `GET /turns`: recent turns, newest first, by agent and status (what the inspector lists). */
export const turnListRoutes: FastifyPluginAsyncZod<TurnListRoutesOptions> = async (app, { service }) => {
  app.get(
    '/turns',
    {
      schema: {
        summary: 'Recent turns',
        description: 'Turn records, newest first; `agentId` and `status` narrow the list, `limit` (1–200, default 50) bounds it.',
        tags: ['turns'],
        operationId: 'listTurns',
        querystring: z.strictObject({
          agentId: z.string().regex(AGENT_ID_PATTERN, 'must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$').optional(),
          status: turnStatusSchema.optional(),
          limit: z.coerce.number().int().min(1).max(200).default(50),
        }),
        response: { 200: z.object({ turns: z.array(turnRecordSchema) }), ...commonErrorResponses },
      },
    },
    async (request) => ({ turns: await service.listTurns(request.query) }),
  );
};
