import { z } from 'zod';

const usageSchema = z.object({ inputTokens: z.number().int(), outputTokens: z.number().int() });
const errorSchema = z.object({
  code: z.string(),
  message: z.string(),
  reason: z.string().optional().describe('A finer cause, e.g. `schema_noncompliance` for `no_result_submitted`.'),
});
const repairSchema = z
  .enum(['none', 'empty_object', 'code_fence', 'balanced_object', 'escaped_control_characters', 'closed_containers'])
  .describe('The rung of the argument repair ladder that produced the arguments.');
const jsonObject = z.record(z.string(), z.unknown());

export const turnKindSchema = z.enum(['text', 'workflow_task']);
export const cancelReasonSchema = z.enum(['client_disconnected', 'cancel_requested', 'timeout', 'shutdown', 'superseded']);
export const toolFailureCodeSchema = z.enum(['invalid_arguments', 'unknown_tool', 'tool_error', 'timeout', 'aborted', 'skipped', 'denied']);
export const callOutcomeSchema = z
  .enum(['not_started', 'cancelled', 'maybe_ran'])
  .describe(
    'How far a call stopped by a cancel or a timeout got: `not_started` (it never began), `cancelled` (the tool acknowledged the stop and its processes are gone), `maybe_ran` (it had begun and its effects are unknown).',
  );
export type CallOutcome = z.infer<typeof callOutcomeSchema>;

const envelope = {
  turnId: z.string(),
  seq: z.number().int().min(1),
  at: z.string().describe('ISO 8601 time the event happened.'),
};

const turnStarted = z.object({
  type: z.literal('turn.started'),
  ...envelope,
  agentId: z.string(),
  kind: turnKindSchema,
  model: z.string(),
  tools: z.array(z.string()).describe('Tool names in assembly order.'),
  unavailableSources: z
    .array(z.object({ source: z.string(), reason: z.string() }))
    .describe('Sources the agent asked for that this server cannot serve; they contributed no tool.'),
});
const turnQueued = z.object({
  type: z.literal('turn.queued'),
  ...envelope,
  position: z.number().int().min(1).describe('Place in the agent\'s queue when the turn was queued; 1 runs next.'),
});
const messageDelta = z.object({ type: z.literal('message.delta'), ...envelope, iteration: z.number().int(), delta: z.string() });
const messageCompleted = z.object({ type: z.literal('message.completed'), ...envelope, iteration: z.number().int(), text: z.string() });
const toolStarted = z.object({
  type: z.literal('tool.started'),
  ...envelope,
  callId: z.string(),
  name: z.string(),
  namespace: z.string().optional(),
  label: z.string(),
  iteration: z.number().int(),
  executionMode: z.enum(['parallel', 'sequential']),
  repair: repairSchema,
  arguments: jsonObject.optional().describe('The validated arguments the tool runs with.'),
});
const toolPresentation = z.object({
  type: z.literal('tool.presentation'),
  ...envelope,
  callId: z.string(),
  name: z.string(),
  event: z.object({ type: z.string(), data: jsonObject.optional() }),
});
const toolCompleted = z.object({
  type: z.literal('tool.completed'),
  ...envelope,
  callId: z.string(),
  name: z.string(),
  namespace: z.string().optional(),
  label: z.string(),
  output: z.string().describe('What the model sees.'),
  details: jsonObject.optional(),
  completedActorEventIds: z.array(z.string()).optional().describe('Actor events the tool completed.'),
  durationMs: z.number(),
  iteration: z.number().int(),
  repair: repairSchema,
});
const toolFailed = z.object({
  type: z.literal('tool.failed'),
  ...envelope,
  callId: z.string(),
  name: z.string(),
  namespace: z.string().optional(),
  label: z.string().optional(),
  error: z.object({ code: toolFailureCodeSchema, message: z.string() }),
  outcome: callOutcomeSchema.optional().describe('Set on every call a cancel or a timeout ended (see `CallOutcome`).'),
  output: z.string().describe('What the model sees.'),
  details: jsonObject.optional(),
  durationMs: z.number(),
  iteration: z.number().int(),
  repair: repairSchema.optional(),
});
const toolApprovalRequested = z.object({
  type: z.literal('tool.approval_requested'),
  ...envelope,
  callId: z.string(),
  name: z.string(),
  namespace: z.string().optional(),
  arguments: z.unknown().describe('The validated arguments.'),
  argumentsHash: z.string().describe('Lowercase hex SHA-256 of the RFC 8785 canonical JSON of `arguments`.'),
  label: z.string().describe('"Waiting for approval: Running `rm -rf build`".'),
  iteration: z.number().int(),
  expiresAt: z.string().describe('When the wait ends as a denial (APPROVAL_TIMEOUT_MS).'),
});
const toolApprovalDecided = z.object({
  type: z.literal('tool.approval_decided'),
  ...envelope,
  callId: z.string(),
  name: z.string(),
  decision: z.enum(['approve', 'deny']),
  message: z.string().optional(),
  reason: z.literal('timeout').optional().describe('Set when nobody decided within APPROVAL_TIMEOUT_MS.'),
});
const turnCompleted = z.object({
  type: z.literal('turn.completed'),
  ...envelope,
  output: z.string(),
  result: z.unknown().optional(),
  iterations: z.number().int(),
  usage: usageSchema,
  outcome: z.enum(['final_answer', 'terminated', 'result_submitted']),
});
const turnFailed = z.object({
  type: z.literal('turn.failed'),
  ...envelope,
  error: errorSchema,
  output: z.string().optional(),
  iterations: z.number().int(),
  usage: usageSchema,
});
const turnCancelled = z.object({
  type: z.literal('turn.cancelled'),
  ...envelope,
  reason: cancelReasonSchema,
  iterations: z.number().int(),
  usage: usageSchema,
});

// Named for the OpenAPI document: each event is a component, the union refers to them.
export const turnEventSchema = z
  .discriminatedUnion('type', [
    turnQueued.meta({ id: 'TurnQueuedEvent' }),
    turnStarted.meta({ id: 'TurnStartedEvent' }),
    messageDelta.meta({ id: 'MessageDeltaEvent' }),
    messageCompleted.meta({ id: 'MessageCompletedEvent' }),
    toolStarted.meta({ id: 'ToolStartedEvent' }),
    toolPresentation.meta({ id: 'ToolPresentationEvent' }),
    toolCompleted.meta({ id: 'ToolCompletedEvent' }),
    toolFailed.meta({ id: 'ToolFailedEvent' }),
    toolApprovalRequested.meta({ id: 'ToolApprovalRequestedEvent' }),
    toolApprovalDecided.meta({ id: 'ToolApprovalDecidedEvent' }),
    turnCompleted.meta({ id: 'TurnCompletedEvent' }),
    turnFailed.meta({ id: 'TurnFailedEvent' }),
    turnCancelled.meta({ id: 'TurnCancelledEvent' }),
  ])
  .meta({ id: 'TurnEvent' });

export type TurnEvent = z.infer<typeof turnEventSchema>;
export type TurnEventType = TurnEvent['type'];
export type TurnUsage = z.infer<typeof usageSchema>;
export type TurnError = z.infer<typeof errorSchema>;
export type CancelReason = z.infer<typeof cancelReasonSchema>;
export type TurnKind = z.infer<typeof turnKindSchema>;
export type ToolFailureCode = z.infer<typeof toolFailureCodeSchema>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An event as its producer emits it; the turn adds `turnId`, `seq` and `at`. */
export type TurnEventBody = DistributiveOmit<TurnEvent, 'turnId' | 'seq' | 'at'>;

export const TERMINAL_EVENT_TYPES: ReadonlySet<TurnEventType> = new Set(['turn.completed', 'turn.failed', 'turn.cancelled']);

export { usageSchema, errorSchema, repairSchema };
