import { z } from 'zod';
import { agentToolsSchema, AGENT_ID_PATTERN, scriptStepSchema } from './turn-request.js';
import { webhookRequestSchema } from './webhook-request.js';

/** `agent` as a turn request has it: who runs the work's turns, with which tool sources. */
export const workAgentSchema = z.strictObject({
  id: z.string().regex(AGENT_ID_PATTERN, 'must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
  instructions: z.string().max(200_000).optional(),
  tools: agentToolsSchema.optional(),
});

/** `model` as a turn request has it: a provider model by name, or a script. */
export const workModelSchema = z.union([
  z.strictObject({ name: z.string().min(1).max(200).optional() }),
  z.strictObject({ script: z.array(scriptStepSchema).max(500) }),
]);

/**
 * What a piece of work that outlives a turn stores to start its turns: the agent (with the tool
 * sources), the model and the webhook. Stored as JSON and read back through this schema.
 */
export const workRequestSchema = z.object({
  agent: workAgentSchema,
  model: workModelSchema,
  webhook: webhookRequestSchema.optional(),
});

export type WorkRequest = z.infer<typeof workRequestSchema>;
