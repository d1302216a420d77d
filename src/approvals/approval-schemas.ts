import { z } from 'zod';

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

export const approvalDecisionBodySchema = z.strictObject({
  decision: z.enum(['approve', 'deny']),
  message: z.string().min(1).max(4_000).optional().describe('Why; a denial passes it on to the model.'),
  argumentsHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits (the pending call\'s argumentsHash)')
    .describe('The `argumentsHash` of the pending call: the decision is bound to exactly those arguments.'),
});

export const approvalDecisionSchema = z
  .object({
    turnId: z.string(),
    callId: z.string(),
    name: z.string(),
    decision: z.enum(['approve', 'deny']),
    message: z.string().optional(),
    decidedAt: z.string(),
    turnStatus: z.enum(['requires_action', 'running']).describe('`running` once this was the last pending call and the turn went on.'),
  })
  .meta({ id: 'ApprovalDecision' });
