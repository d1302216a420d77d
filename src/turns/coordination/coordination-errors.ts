import { ServiceError } from '../../service-error.js';

export function idempotencyKeyReused(turnId: string): ServiceError {
  return new ServiceError({
    statusCode: 422,
    code: 'idempotency_key_reused',
    message: `this Idempotency-Key already made turn "${turnId}" with a different request body; use a new key for a new request`,
  });
}

export function agentBusy(options: { readonly agentId: string; readonly reason: 'running' | 'queue_full'; readonly queueLimit: number }): ServiceError {
  const message =
    options.reason === 'running'
      ? `agent "${options.agentId}" already has a turn running (multitask "reject"); retry when it ends, or send multitask "enqueue"`
      : `agent "${options.agentId}" already has ${options.queueLimit} turns queued (AGENT_QUEUE_LIMIT); retry when one has run`;
  return new ServiceError({ statusCode: 409, code: 'agent_busy', message });
}
