import type { WebhookAttempt } from '../webhooks/webhook-service.js';
import type { WorkflowStore } from './workflow-store.js';

/** Shows a webhook delivery attempt in the run's events: `webhook.attempted`, or `webhook.failed` with the reason. */
export async function showWebhookAttempt(store: WorkflowStore, runId: string, attempt: WebhookAttempt): Promise<void> {
  if (attempt.outcome === 'failed') {
    await store.appendEvent(runId, { type: 'webhook.failed', webhookId: attempt.webhookId, attempt: attempt.attempt, url: attempt.url, statusCode: attempt.statusCode, reason: attempt.error ?? 'not delivered' });
    return;
  }
  await store.appendEvent(runId, { type: 'webhook.attempted', webhookId: attempt.webhookId, attempt: attempt.attempt, url: attempt.url, outcome: attempt.outcome, statusCode: attempt.statusCode, error: attempt.error });
}
