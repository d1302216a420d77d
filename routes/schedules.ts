import type { FastifyPluginAsyncZod } from '@fastify/type-provider-zod';
import { z } from 'zod';
import { workAgentSchema, workModelSchema } from '../src/turns/work-request.js';
import { commonErrorResponses, errorEnvelopeSchema } from '../src/http/error-envelope.js';
import { creationKeyOf, idempotencyKeyHeader, REPLAYED_HEADER } from '../src/http/idempotency-key-header.js';
import { missedPolicySchema, overlapPolicySchema, scheduleKindSchema, scheduleRecordSchema } from '../src/schedules/schedule-record.js';
import type { ScheduleService } from '../src/schedules/schedule-service.js';
import { AGENT_ID_PATTERN } from '../src/turns/turn-request.js';
import { webhookRequestSchema } from '../src/turns/webhook-request.js';

export interface ScheduleRoutesOptions {
  readonly schedules: ScheduleService;
  /** Idempotency keys are scoped to the bearer token when auth is on, to the server otherwise. */
  readonly authEnabled: boolean;
}

const scheduleParams = z.object({ id: z.string().min(1).max(200) });
const createBody = z.strictObject({
  agent: workAgentSchema.describe('Who each fire\'s turn is for, with its tool sources.'),
  kind: scheduleKindSchema,
  at: z.string().max(100).optional().describe('once: ISO 8601 time with its offset.'),
  delaySeconds: z.number().int().min(1).max(366 * 86_400).optional().describe('once: seconds from now (instead of `at`).'),
  cron: z.string().max(200).optional().describe('cron: 5 fields, or 6 with seconds first.'),
  timeZone: z.string().max(100).optional().describe('IANA zone the cron expression is read in (and fire times are described in); default UTC.'),
  prompt: z.string().min(1).max(100_000).describe("Each fire's turn input."),
  model: workModelSchema.describe('Reused for every fire; a script restarts at each fire.'),
  overlap: overlapPolicySchema.optional().describe('A fire due while the previous fire\'s turn still runs: `skip` (default) or `enqueue` (runs after it).'),
  missed: missedPolicySchema.optional().describe('Fires due while the service was down: `skip`, or `run_once` (default: one fire when it is back).'),
  webhook: webhookRequestSchema.optional().describe("POSTed `turn.completed` | `turn.failed` | `turn.cancelled` at the end of each fire's turn."),
});

/** `POST /schedules`, reading, pausing, resuming and deleting schedules. */
export const scheduleRoutes: FastifyPluginAsyncZod<ScheduleRoutesOptions> = async (app, { schedules, authEnabled }) => {
  const withRecord = { 200: scheduleRecordSchema, 404: errorEnvelopeSchema, ...commonErrorResponses };
  app.post(
    '/schedules',
    {
      schema: {
        summary: 'Create a schedule',
        description: 'Each fire starts a text turn for the agent with the prompt (its record carries `scheduleId`), on exactly one replica. A bad cron expression or time zone is `400 invalid_request` naming the field.',
        tags: ['schedules'],
        operationId: 'createSchedule',
        body: createBody,
        headers: z.looseObject({ 'idempotency-key': idempotencyKeyHeader('the schedule it made, as it is now') }),
        response: { 201: scheduleRecordSchema, 422: errorEnvelopeSchema.describe('`idempotency_key_reused`: the key already made a schedule with another body.'), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const { agent, model, webhook, ...rest } = request.body;
      const { record, replayed } = await schedules.create({ ...rest, request: { agent, model, ...(webhook === undefined ? {} : { webhook }) } }, creationKeyOf(request, { authEnabled }));
      if (replayed) void reply.header(REPLAYED_HEADER, 'true');
      return reply.code(201).send(record);
    },
  );

  app.get('/schedules/:id', { schema: { summary: 'A schedule', tags: ['schedules'], operationId: 'getSchedule', params: scheduleParams, response: withRecord } }, async (request) => schedules.get(request.params.id));

  app.get(
    '/schedules',
    {
      schema: {
        summary: "An agent's schedules",
        description: 'Newest first, at most 100.',
        tags: ['schedules'],
        operationId: 'listSchedules',
        querystring: z.object({ agentId: z.string().regex(AGENT_ID_PATTERN, 'must be an agent id') }),
        response: { 200: z.object({ schedules: z.array(scheduleRecordSchema) }), ...commonErrorResponses },
      },
    },
    async (request) => ({ schedules: await schedules.list({ agentId: request.query.agentId }) }),
  );

  app.post(
    '/schedules/:id/pause',
    { schema: { summary: 'Pause a schedule', description: 'No fire until resumed; `nextFireAt` is null meanwhile.', tags: ['schedules'], operationId: 'pauseSchedule', params: scheduleParams, response: withRecord } },
    async (request) => schedules.pause(request.params.id),
  );

  app.post(
    '/schedules/:id/resume',
    { schema: { summary: 'Resume a schedule', description: 'Fires again from now on.', tags: ['schedules'], operationId: 'resumeSchedule', params: scheduleParams, response: withRecord } },
    async (request) => schedules.resume(request.params.id),
  );

  app.delete(
    '/schedules/:id',
    { schema: { summary: 'Delete a schedule', description: 'No more fires; then `404 schedule_not_found`.', tags: ['schedules'], operationId: 'deleteSchedule', params: scheduleParams, response: { 204: z.null(), 404: errorEnvelopeSchema, ...commonErrorResponses } } },
    async (request, reply) => {
      await schedules.remove(request.params.id);
      return reply.code(204).send(null);
    },
  );
};
