import type { FastifyPluginAsyncZod } from '@fastify/type-provider-zod';
import { z } from 'zod';
import { commonErrorResponses, errorEnvelopeSchema } from '../src/http/error-envelope.js';
import { creationKeyOf, idempotencyKeyHeader, REPLAYED_HEADER } from '../src/http/idempotency-key-header.js';
import { EventStreamWriter } from '../src/http/event-stream-writer.js';
import { negotiateStreamFormat } from '../src/http/negotiate-stream-format.js';
import { ServiceError } from '../src/service-error.js';
import type { StoredWorkflowEvent } from '../src/workflows/workflow-events.js';
import { workflowEventSchema } from '../src/workflows/workflow-events.js';
import type { WorkflowEngine } from '../src/workflows/workflow-engine.js';
import { workflowRecordSchema, workflowRequestSchema } from '../src/workflows/workflow-request.js';

export interface WorkflowRoutesOptions {
  readonly engine: WorkflowEngine;
  readonly ssePingMs: number;
  /** Idempotency keys are scoped to the bearer token when auth is on, to the server otherwise. */
  readonly authEnabled: boolean;
}

const params = z.object({ id: z.string().min(1).max(200) });
const sequence = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const SSE_RETRY_MS = 3_000;

/** The workflow routes: start, read, list, cancel, follow. Thin: the engine does the work. */
export const workflowRoutes: FastifyPluginAsyncZod<WorkflowRoutesOptions> = async (app, { engine, ssePingMs, authEnabled }) => {
  app.post(
    '/workflows',
    {
      schema: {
        summary: 'Start a workflow run',
        description: 'Stores the run and answers at once; its agent() calls run as `workflow_task` turns on durable work (any replica), and it resumes by itself after a restart.',
        tags: ['workflows'],
        operationId: 'createWorkflow',
        body: workflowRequestSchema,
        headers: z.looseObject({ 'idempotency-key': idempotencyKeyHeader('the run it made, as it is now') }),
        response: { 201: workflowRecordSchema, 422: errorEnvelopeSchema.describe('`idempotency_key_reused`: the key already made a run with another body.'), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const { record, replayed } = await engine.startRun(request.body, creationKeyOf(request, { authEnabled }));
      if (replayed) void reply.header(REPLAYED_HEADER, 'true');
      return reply.code(201).send(record);
    },
  );

  app.get(
    '/workflows/:id',
    { schema: { summary: 'A workflow run', tags: ['workflows'], operationId: 'getWorkflow', params, response: { 200: workflowRecordSchema, 404: errorEnvelopeSchema, ...commonErrorResponses } } },
    (request) => engine.getRun(request.params.id),
  );

  app.get(
    '/workflows',
    {
      schema: {
        summary: 'Workflow runs, newest first',
        tags: ['workflows'],
        operationId: 'listWorkflows',
        querystring: z.strictObject({
          agentId: z.string().min(1).max(64).optional(),
          status: z.enum(['running', 'completed', 'failed', 'cancelled']).optional(),
          limit: z.coerce.number().int().min(1).max(200).default(50),
        }),
        response: { 200: z.object({ workflows: z.array(workflowRecordSchema) }), ...commonErrorResponses },
      },
    },
    async (request) => ({ workflows: await engine.listRuns(request.query) }),
  );

  app.post(
    '/workflows/:id/cancel',
    {
      schema: {
        summary: 'Cancel a workflow run',
        description: 'No new task starts, running task turns end `turn.cancelled` (`cancel_requested`), late results are ignored; the run ends `cancelled` once. `409 workflow_not_running` when it has ended or is already being cancelled.',
        tags: ['workflows'],
        operationId: 'cancelWorkflow',
        params,
        response: { 202: workflowRecordSchema, 404: errorEnvelopeSchema, 409: errorEnvelopeSchema, ...commonErrorResponses },
      },
    },
    async (request, reply) => reply.code(202).send(await engine.cancelRun(request.params.id, { idempotent: false })),
  );

  app.get(
    '/workflows/:id/events',
    {
      schema: {
        summary: "A workflow run's events",
        description: 'Replays the events after `Last-Event-ID` or `?after=N`, then follows the run until its end (from any replica). SSE by default, NDJSON for `application/x-ndjson`, JSON for the events so far. `204` when the run has ended and the cursor is at or past its terminal event and nothing follows.',
        tags: ['workflows'],
        operationId: 'getWorkflowEvents',
        params,
        querystring: z.object({ after: sequence.optional() }),
        headers: z.object({ 'last-event-id': sequence.optional().describe('Resume after this seq (the `id:` of the last event received); the larger of it and `?after` wins.') }),
        response: { 200: z.object({ events: z.array(workflowEventSchema) }), 204: z.null().describe('Nothing more will come.'), 404: errorEnvelopeSchema, 406: errorEnvelopeSchema, ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const format = negotiateStreamFormat(request.headers.accept);
      if (format === undefined) throw new ServiceError({ statusCode: 406, code: 'not_acceptable', message: 'Accept text/event-stream, application/x-ndjson or application/json' });
      const runId = request.params.id;
      const afterSeq = Math.max(request.query.after ?? 0, request.headers['last-event-id'] ?? 0);
      const bounds = await engine.eventBounds(runId);
      const controller = new AbortController();
      if (format === 'json') {
        const events: StoredWorkflowEvent[] = [];
        await engine.streamEvents({ runId, afterSeq, follow: false, signal: controller.signal, onEvent: (event) => events.push(event) });
        const body = `{"events":[${events.map((event) => event.json).join(',')}]}`;
        return reply.type('application/json; charset=utf-8').serializer((payload: unknown) => payload as string).send(body as never);
      }
      if (bounds.terminalSeq !== undefined && afterSeq >= bounds.lastSeq) return reply.code(204).send(null);
      reply.hijack();
      const writer = new EventStreamWriter({ response: reply.raw, format, pingMs: ssePingMs, headers: { 'workflow-id': runId } });
      if (format === 'sse') reply.raw.write(`retry: ${SSE_RETRY_MS}\n\n`);
      reply.raw.once('close', () => {
        writer.abandon();
        controller.abort();
      });
      try {
        await engine.streamEvents({ runId, afterSeq, follow: true, signal: controller.signal, onEvent: (event) => {
            writer.write(event);
          } });
      } catch (error) {
        request.log.error({ err: error }, 'workflow event stream failed');
      }
      writer.end();
      return reply;
    },
  );
};
