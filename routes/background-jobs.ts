import type { FastifyPluginAsyncZod } from '@fastify/type-provider-zod';
import { z } from 'zod';
import { backgroundJobEventSchema, type StoredJobEvent } from '../src/background-jobs/background-job-events.js';
import { backgroundJobRecordSchema } from '../src/background-jobs/background-job-record.js';
import type { BackgroundJobService } from '../src/background-jobs/background-job-service.js';
import { workAgentSchema, workModelSchema } from '../src/turns/work-request.js';
import { commonErrorResponses, errorEnvelopeSchema } from '../src/http/error-envelope.js';
import { creationKeyOf, idempotencyKeyHeader, REPLAYED_HEADER } from '../src/http/idempotency-key-header.js';
import { EventStreamWriter } from '../src/http/event-stream-writer.js';
import { negotiateStreamFormat } from '../src/http/negotiate-stream-format.js';
import { ServiceError } from '../src/service-error.js';
import { AGENT_ID_PATTERN } from '../src/turns/turn-request.js';
import { webhookRequestSchema } from '../src/turns/webhook-request.js';

export interface BackgroundJobRoutesOptions {
  readonly jobs: BackgroundJobService;
  readonly ssePingMs: number;
  /** Idempotency keys are scoped to the bearer token when auth is on, to the server otherwise. */
  readonly authEnabled: boolean;
}

const jobParams = z.object({ id: z.string().min(1).max(200) });
const sequence = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const createBody = z.strictObject({
  agent: workAgentSchema.describe('Who runs the job, with the tool sources its turns get (`backgroundJobs` is dropped: jobs do not nest).'),
  title: z.string().trim().min(1).max(200),
  instructions: z.string().trim().min(1).max(100_000).describe('What the first turn is told.'),
  model: workModelSchema.describe('Reused for every turn. A script is one script for the whole job: each turn plays the steps up to and including the next step without calls, the next turn goes on from there.'),
  webhook: webhookRequestSchema.optional().describe('POSTed `background_job.completed` | `failed` | `stopped` at the end.'),
});

/** `POST /background-jobs`, reading, messaging and stopping jobs, and their events. */
export const backgroundJobRoutes: FastifyPluginAsyncZod<BackgroundJobRoutesOptions> = async (app, { jobs, ssePingMs, authEnabled }) => {
  app.post(
    '/background-jobs',
    {
      schema: {
        summary: 'Start a background job',
        description: 'A job runs as its own sequence of text turns: the first with the instructions, each later one with the messages queued meanwhile; it completes when a turn ends with no message waiting.',
        tags: ['background-jobs'],
        operationId: 'createBackgroundJob',
        body: createBody,
        headers: z.looseObject({ 'idempotency-key': idempotencyKeyHeader('the job it made, as it is now') }),
        response: { 201: backgroundJobRecordSchema, 422: errorEnvelopeSchema.describe('`idempotency_key_reused`: the key already made a job with another body.'), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const { agent, model, webhook, title, instructions } = request.body;
      const { record, replayed } = await jobs.create({ request: { agent, model, ...(webhook === undefined ? {} : { webhook }) }, title, instructions, key: creationKeyOf(request, { authEnabled }) });
      if (replayed) void reply.header(REPLAYED_HEADER, 'true');
      return reply.code(201).send(record);
    },
  );

  app.get(
    '/background-jobs/:id',
    { schema: { summary: 'A background job', tags: ['background-jobs'], operationId: 'getBackgroundJob', params: jobParams, response: { 200: backgroundJobRecordSchema, 404: errorEnvelopeSchema, ...commonErrorResponses } } },
    async (request) => jobs.get(request.params.id),
  );

  app.get(
    '/background-jobs',
    {
      schema: {
        summary: "An agent's background jobs",
        description: 'Newest first.',
        tags: ['background-jobs'],
        operationId: 'listBackgroundJobs',
        querystring: z.object({ agentId: z.string().regex(AGENT_ID_PATTERN, 'must be an agent id'), limit: z.coerce.number().int().min(1).max(100).default(32) }),
        response: { 200: z.object({ backgroundJobs: z.array(backgroundJobRecordSchema) }), ...commonErrorResponses },
      },
    },
    async (request) => ({ backgroundJobs: await jobs.list({ agentId: request.query.agentId, limit: request.query.limit }) }),
  );

  app.post(
    '/background-jobs/:id/messages',
    {
      schema: {
        summary: 'Message a running job',
        description: 'Queued for the job\'s next turn; `202` with the record. `409 job_not_running` once the job has ended.',
        tags: ['background-jobs'],
        operationId: 'sendBackgroundJobMessage',
        params: jobParams,
        body: z.strictObject({ text: z.string().trim().min(1).max(100_000) }),
        response: { 202: backgroundJobRecordSchema, 404: errorEnvelopeSchema, 409: errorEnvelopeSchema, ...commonErrorResponses },
      },
    },
    async (request, reply) => reply.code(202).send(await jobs.sendMessage({ jobId: request.params.id, text: request.body.text })),
  );

  app.post(
    '/background-jobs/:id/stop',
    {
      schema: {
        summary: 'Stop a running job',
        description: 'Aborts its running turn (on whichever replica runs it) and ends the job `stopped`; `409 job_not_running` once it has ended.',
        tags: ['background-jobs'],
        operationId: 'stopBackgroundJob',
        params: jobParams,
        response: { 202: backgroundJobRecordSchema, 404: errorEnvelopeSchema, 409: errorEnvelopeSchema, ...commonErrorResponses },
      },
    },
    async (request, reply) => reply.code(202).send(await jobs.stop({ jobId: request.params.id })),
  );

  app.get(
    '/background-jobs/:id/events',
    {
      schema: {
        summary: "A background job's events",
        description:
          'Replays the events after `Last-Event-ID` or `?after=N`, then follows until `job.completed` | `job.failed` | `job.stopped`. SSE by default, NDJSON for `application/x-ndjson`, `application/json` for what is stored now (webhook attempts, which come after the end, included). `204` when resumed at or past the end.',
        tags: ['background-jobs'],
        operationId: 'getBackgroundJobEvents',
        params: jobParams,
        querystring: z.object({ after: sequence.optional() }),
        headers: z.object({ 'last-event-id': sequence.optional().describe('Resume after this seq (the `id:` of the last event received); the larger of it and `?after` wins.') }),
        response: { 200: z.object({ events: z.array(backgroundJobEventSchema) }), 204: z.null(), 404: errorEnvelopeSchema, 406: errorEnvelopeSchema, ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const format = negotiateStreamFormat(request.headers.accept);
      if (format === undefined) throw new ServiceError({ statusCode: 406, code: 'not_acceptable', message: 'Accept text/event-stream, application/x-ndjson or application/json' });
      const jobId = request.params.id;
      const afterSeq = Math.max(request.query.after ?? 0, request.headers['last-event-id'] ?? 0);
      await jobs.get(jobId);
      const controller = new AbortController();
      if (format === 'json') {
        const events: StoredJobEvent[] = [];
        await jobs.streamEvents({ jobId, afterSeq, follow: false, signal: controller.signal, onEvent: (event) => events.push(event) });
        const body = `{"events":[${events.map((event) => event.json).join(',')}]}`;
        return reply.type('application/json; charset=utf-8').serializer((payload: unknown) => payload as string).send(body as never);
      }
      if (afterSeq > 0 && (await jobs.endedAtOrBefore(jobId, afterSeq))) return reply.code(204).send(null);
      reply.hijack();
      const writer = new EventStreamWriter({ response: reply.raw, format, pingMs: ssePingMs, headers: { 'background-job-id': jobId } });
      reply.raw.once('close', () => {
        writer.abandon();
        controller.abort();
      });
      try {
        await jobs.streamEvents({ jobId, afterSeq, follow: true, signal: controller.signal, onEvent: (event) => { writer.write(event); } });
      } catch (error) {
        request.log.error({ err: error }, 'job event stream failed');
      }
      writer.end();
      return reply;
    },
  );
};
