import { z } from 'zod';
import { approvalPolicySchema } from './approval-policy.js';
import { webhookRequestSchema } from './webhook-request.js';
import { turnKindSchema } from '../events/turn-events.js';

const jsonObjectSchema = z.record(z.string(), z.unknown());

const textPart = z.strictObject({ type: z.enum(['input_text', 'output_text']), text: z.string().max(1_000_000) });
const imagePart = z.strictObject({
  type: z.literal('input_image'),
  image_url: z.string().max(20_000_000),
  detail: z.enum(['auto', 'low', 'high']).optional(),
});
const contentParts = z.array(z.union([textPart, imagePart])).max(500);

const messageItem = z.strictObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string().max(1_000_000), contentParts]),
});
const functionCallItem = z.strictObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1).max(200),
  name: z.string().min(1).max(200),
  arguments: z.string().max(512 * 1024),
  namespace: z.string().max(200).optional(),
});
const functionCallOutputItem = z.strictObject({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1).max(200),
  output: z.union([z.string().max(1_000_000), contentParts]),
});

export const inputItemSchema = z.union([messageItem, functionCallItem, functionCallOutputItem]);
export type InputItem = z.infer<typeof inputItemSchema>;

export const scriptStepSchema = z.strictObject({
  text: z.string().max(1_000_000).optional(),
  calls: z
    .array(
      z.strictObject({
        name: z.string().min(1).max(200),
        arguments: z.union([z.string().max(512 * 1024), jsonObjectSchema]),
        callId: z.string().min(1).max(200).optional(),
        namespace: z.string().min(1).max(200).optional(),
      }),
    )
    .max(64)
    .optional(),
  delayMs: z.number().int().min(0).max(60_000).optional().describe('Waits before answering, to demonstrate cancellation.'),
});

export const agentToolsSchema = z
  .strictObject({
    todo: z.boolean().optional(),
    computer: z.boolean().optional(),
    web: z.boolean().optional(),
    schedule: z.boolean().optional(),
    backgroundJobs: z.boolean().optional(),
    workflows: z.boolean().optional(),
    brain: z.boolean().optional(),
    skills: z.array(z.string().min(1).max(64)).max(50).optional(),
    mcp: z.array(z.string().min(1).max(64)).max(50).optional().describe('Configured MCP servers this agent may use, by name.'),
  })
  .describe('The agent context for assembly. Each source is off unless set.');

export const multitaskSchema = z.enum(['enqueue', 'reject', 'interrupt', 'concurrent']);
export type Multitask = z.infer<typeof multitaskSchema>;

export const AGENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export const turnRequestSchema = z
  .strictObject({
    agent: z.strictObject({
      id: z.string().regex(AGENT_ID_PATTERN, 'must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
      instructions: z.string().max(200_000).optional(),
      tools: agentToolsSchema.optional(),
      approvals: approvalPolicySchema.optional(),
    }),
    kind: turnKindSchema.default('text'),
    input: z.union([z.string().min(1).max(1_000_000), z.array(inputItemSchema).min(1).max(2_000)]),
    model: z
      .union([
        z.strictObject({ name: z.string().min(1).max(200).optional() }),
        z.strictObject({
          script: z.array(scriptStepSchema).max(500),
          tasks: z
            .record(z.string().min(1).max(210), z.array(scriptStepSchema).max(500))
            .optional()
            .describe('Scripted steps for the task turns of workflows this turn starts, by agent() label (see POST /workflows `model.tasks`).'),
        }),
      ])
      .default({}),
    limits: z
      .strictObject({
        maxIterations: z.number().int().min(1).max(10_000).optional(),
        timeoutMs: z.number().int().min(1).max(86_400_000).optional(),
      })
      .optional()
      .describe('Optional caps; the server clamps them to its own maximums.'),
    multitask: multitaskSchema
      .optional()
      .describe(
        'What happens when the agent already has a turn running (on any replica): `enqueue` (default) waits in the agent\'s queue, `reject` answers 409 agent_busy, `interrupt` cancels the running turn (reason `superseded`) and runs next, `concurrent` runs at once beside it in the same home. `workflow_task` turns always run concurrently.',
      ),
    task: z
      .strictObject({
        instructions: z.string().min(1).max(200_000),
        resultSchema: jsonObjectSchema.describe('JSON Schema of the result; the root must be an object.'),
      })
      .optional()
      .describe('Required for `workflow_task` turns, refused otherwise.'),
    webhook: webhookRequestSchema.optional().describe('POSTed `turn.completed` | `turn.failed` | `turn.cancelled` when the turn ends.'),
  })
  .superRefine((request, context) => {
    if (request.kind === 'workflow_task' && request.task === undefined) {
      context.addIssue({ code: 'custom', path: ['task'], message: 'required when kind is "workflow_task"' });
    }
    if (request.kind === 'workflow_task' && request.multitask !== undefined && request.multitask !== 'concurrent') {
      context.addIssue({ code: 'custom', path: ['multitask'], message: 'workflow_task turns never take their agent and always run concurrently' });
    }
    if (request.kind === 'text' && request.task !== undefined) {
      context.addIssue({ code: 'custom', path: ['task'], message: 'only allowed when kind is "workflow_task"' });
    }
  });

export type TurnRequest = z.infer<typeof turnRequestSchema>;
export type ScriptStepInput = z.infer<typeof scriptStepSchema>;
