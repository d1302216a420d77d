import { z } from 'zod';

const envelope = { workflowId: z.string(), seq: z.number().int().min(1), at: z.string() };
const errorSchema = z.object({ code: z.string(), message: z.string() });

/** The events of a run, as `GET /workflows/:id/events` serves them. */
export const workflowEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('workflow.started'), ...envelope, agentId: z.string(), title: z.string(), concurrency: z.number().int(), maxAgentCalls: z.number().int() }),
  z.object({ type: z.literal('task.started'), ...envelope, taskId: z.string(), label: z.string().nullable(), turnId: z.string(), attempt: z.number().int() }),
  z.object({ type: z.literal('task.completed'), ...envelope, taskId: z.string(), value: z.unknown() }),
  z.object({
    type: z.literal('task.failed'),
    ...envelope,
    taskId: z.string(),
    error: z.string(),
    attempt: z.number().int().describe('0 when the call failed before any attempt (a bad schema).'),
    willRetry: z.boolean(),
  }),
  z.object({ type: z.literal('workflow.completed'), ...envelope, result: z.unknown() }),
  z.object({ type: z.literal('workflow.failed'), ...envelope, error: errorSchema }),
  z.object({ type: z.literal('workflow.cancelled'), ...envelope }),
  z.object({
    type: z.literal('webhook.attempted'),
    ...envelope,
    webhookId: z.string(),
    attempt: z.number().int(),
    url: z.string(),
    outcome: z.enum(['delivered', 'retrying']),
    statusCode: z.number().int().nullable(),
    error: z.string().nullable(),
  }),
  z.object({ type: z.literal('webhook.failed'), ...envelope, webhookId: z.string(), attempt: z.number().int(), url: z.string(), statusCode: z.number().int().nullable(), reason: z.string() }),
]);

export type WorkflowEvent = z.infer<typeof workflowEventSchema>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event as the engine emits it; the store adds `workflowId`, `seq` and `at`. */
export type WorkflowEventBody = DistributiveOmit<WorkflowEvent, 'workflowId' | 'seq' | 'at'>;

export const TERMINAL_WORKFLOW_EVENTS: ReadonlySet<string> = new Set(['workflow.completed', 'workflow.failed', 'workflow.cancelled']);

/** A stored event: its JSON text is served as is. */
export interface StoredWorkflowEvent {
  readonly seq: number;
  readonly type: string;
  readonly json: string;
}
