import { z } from 'zod';
import { errorSchema, turnEventSchema, turnKindSchema, usageSchema } from '../events/turn-events.js';

/** A call waiting for a person, in the turn record. */
export const pendingApprovalSchema = z
  .object({
    callId: z.string(),
    name: z.string(),
    namespace: z.string().optional(),
    arguments: z.unknown().describe('The validated arguments.'),
    argumentsHash: z.string().describe('Lowercase hex SHA-256 of the RFC 8785 canonical JSON of `arguments`; a decision must name it.'),
    label: z.string(),
    requestedAt: z.string(),
    expiresAt: z.string().describe('When the wait ends as a denial (APPROVAL_TIMEOUT_MS).'),
  })
  .meta({ id: 'PendingApproval' });

export const turnStatusSchema = z.enum(['queued', 'running', 'requires_action', 'completed', 'failed', 'cancelled', 'interrupted']);

/** The turn record of `GET /turns/:id`. */
export const turnRecordSchema = z
  .object({
    id: z.string(),
    agentId: z.string(),
    kind: turnKindSchema,
    status: turnStatusSchema,
    model: z.string(),
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
    iterations: z.number().int(),
    output: z.string().nullable(),
    result: z.unknown().optional().describe('The accepted result of a workflow task.'),
    error: errorSchema.nullable(),
    outcome: z
      .string()
      .nullable()
      .describe('How the turn ended: final_answer, terminated, result_submitted, iteration_exhausted, an error code, or cancelled.'),
    usage: usageSchema,
    queuedAt: z.string().optional().describe('When the turn was put in its agent\'s queue (multitask `enqueue` or `interrupt`); absent when it never waited.'),
    pendingApprovals: z.array(pendingApprovalSchema).optional().describe('The calls waiting for a person, while `status` is `requires_action`.'),
    scheduleId: z.string().optional().describe('The schedule whose fire started this turn.'),
    backgroundJobId: z.string().optional().describe('The background job this turn is a step of.'),
  })
  .meta({ id: 'TurnRecord' });

export const turnWithEventsSchema = turnRecordSchema.extend({ events: z.array(turnEventSchema) }).meta({ id: 'TurnWithEvents' });

const toolSnapshotEntrySchema = z.object({
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  strict: z.boolean(),
  namespace: z.string().nullable(),
  deferLoading: z.boolean(),
  executionMode: z.enum(['parallel', 'sequential']),
  isReadOnly: z.boolean(),
  isDestructive: z.boolean(),
  schemaSource: z.enum(['zod', 'json']),
});

export const turnToolsSchema = z
  .object({
    turnId: z.string(),
    kind: turnKindSchema,
    tools: z.array(toolSnapshotEntrySchema),
    unavailableSources: z
      .array(z.object({ source: z.string(), reason: z.string() }))
      .describe('Sources the agent asked for that this server could not serve; they contributed no tool.'),
    providerTools: z.array(z.unknown()).describe('The tool definitions of the first Responses request, byte for byte as sent.'),
    providerToolsByIteration: z
      .array(z.object({ iteration: z.number().int(), providerTools: z.array(z.unknown()) }))
      .describe('The provider tool list of every iteration in which it changed, starting with the first.'),
  })
  .meta({ id: 'TurnTools' });
