import { z } from 'zod';
import { AGENT_ID_PATTERN } from '../turns/turn-request.js';
import { webhookRequestSchema } from '../turns/webhook-request.js';
import { WORKFLOW_LIMITS } from './workflow-limits.js';
import { workflowModelSchema } from './workflow-model.js';

const byteLength = (value: string) => Buffer.byteLength(value, 'utf8');

/** The task turns' agent: its id, instructions, and the task-turn sources (web, brain). */
export const workflowAgentSchema = z.strictObject({
  id: z.string().regex(AGENT_ID_PATTERN, 'must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
  instructions: z.string().max(200_000).optional(),
  tools: z
    .looseObject({ web: z.boolean().optional(), brain: z.boolean().optional() })
    .optional()
    .describe('The agent context; task turns use only `web` and `brain` (their fixed catalog).'),
});

/** `POST /workflows`. */
export const workflowRequestSchema = z
  .strictObject({
    agent: workflowAgentSchema,
    title: z.string().min(1).max(WORKFLOW_LIMITS.titleChars),
    script: z.string().min(1).describe(`JavaScript, the body of an async function of \`agent\` and \`args\`; at most ${WORKFLOW_LIMITS.scriptBytes} bytes.`),
    args: z.record(z.string(), z.unknown()).optional().describe(`An object the script reads as \`args\`; at most ${WORKFLOW_LIMITS.argsBytes} bytes of JSON.`),
    model: workflowModelSchema.default({}),
    concurrency: z.number().int().min(1).max(WORKFLOW_LIMITS.maxConcurrency).optional().describe(`Task turns at once (default ${WORKFLOW_LIMITS.defaultConcurrency}).`),
    maxAgentCalls: z.number().int().min(1).max(WORKFLOW_LIMITS.maxAgentCalls).optional().describe(`agent() calls allowed (default ${WORKFLOW_LIMITS.defaultMaxAgentCalls}).`),
    webhook: webhookRequestSchema.optional(),
  })
  .superRefine((request, context) => {
    if (byteLength(request.script) > WORKFLOW_LIMITS.scriptBytes) {
      context.addIssue({ code: 'custom', path: ['script'], message: `is ${byteLength(request.script)} bytes; at most ${WORKFLOW_LIMITS.scriptBytes}` });
    }
    const args = JSON.stringify(request.args ?? {});
    if (byteLength(args) > WORKFLOW_LIMITS.argsBytes) context.addIssue({ code: 'custom', path: ['args'], message: `is ${byteLength(args)} bytes of JSON; at most ${WORKFLOW_LIMITS.argsBytes}` });
  });

export type WorkflowRequest = z.infer<typeof workflowRequestSchema>;

const countsSchema = z.object({ total: z.number().int(), running: z.number().int(), succeeded: z.number().int(), failed: z.number().int(), cancelled: z.number().int() });

/** A run as `GET /workflows/:id` shows it. */
export const workflowRecordSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  title: z.string(),
  status: z.enum(['running', 'completed', 'failed', 'cancelled']),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
  counts: countsSchema.describe('agent() calls, not attempts: `running` counts calls not settled yet (waiting for a slot or running), `failed` calls whose attempts ran out.'),
  failures: z.array(z.object({ taskId: z.string(), label: z.string().nullable(), error: z.string() })).max(10),
  result: z.unknown().describe('The script\'s return value, once completed; null otherwise.'),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  concurrency: z.number().int(),
  maxAgentCalls: z.number().int(),
  cancelRequested: z.boolean(),
  sourceTurnId: z.string().optional(),
  sourceCallId: z.string().optional(),
});

export type WorkflowRecord = z.infer<typeof workflowRecordSchema>;
