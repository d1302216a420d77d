import type { FastifyPluginAsyncZod } from '@fastify/type-provider-zod';
import { z } from 'zod';
import { approvalDecisionBodySchema, approvalDecisionSchema } from '../src/approvals/approval-schemas.js';
import type { ApprovalService } from '../src/approvals/approval-service.js';
import { commonErrorResponses, errorEnvelopeSchema } from '../src/http/error-envelope.js';

export interface ApprovalRoutesOptions {
  readonly approvals: ApprovalService;
}

/** `POST /turns/:id/approvals/:callId`: a person's decision on a parked call. */
export const approvalRoutes: FastifyPluginAsyncZod<ApprovalRoutesOptions> = async (app, { approvals }) => {
  app.post(
    '/turns/:id/approvals/:callId',
    {
      schema: {
        summary: 'Approve or deny a call that waits',
        description:
          'Decides one call the turn parked (`tool.approval_requested`, the record\'s `pendingApprovals`). The decision is bound to the turn, the call id and `argumentsHash`, the hash of the exact validated arguments. When the last pending call of the turn is decided, the turn goes on (on this replica): approved calls run, denied ones are answered to the model as denied. 404 `approval_not_found` for a call the turn never parked; 409 `approval_not_pending` once it is decided or the turn has ended; 422 `approval_mismatch` when the hash is not the pending call\'s.',
        tags: ['turns'],
        operationId: 'decideApproval',
        params: z.object({ id: z.string().min(1).max(200), callId: z.string().min(1).max(200) }),
        body: approvalDecisionBodySchema,
        response: {
          202: approvalDecisionSchema,
          404: errorEnvelopeSchema,
          409: errorEnvelopeSchema,
          413: errorEnvelopeSchema,
          415: errorEnvelopeSchema,
          422: errorEnvelopeSchema,
          ...commonErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const decided = await approvals.decide({ turnId: request.params.id, callId: request.params.callId, ...request.body });
      return reply.code(202).send(decided);
    },
  );
};
