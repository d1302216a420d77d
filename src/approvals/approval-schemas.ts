import { z } from 'zod';

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
