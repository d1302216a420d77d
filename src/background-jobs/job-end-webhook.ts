import type { EnqueueOptions } from '../durable/durable-work.js';
import type { WorkRequest } from '../turns/work-request.js';
import type { WebhookService } from '../webhooks/webhook-service.js';

/** The delivery job of a job's `background_job.<status>` webhook, when its request asked for one. */
export function jobEndWebhook(options: {
  readonly webhooks: WebhookService;
  readonly jobId: string;
  readonly row: { readonly agent_id: string; readonly request_json: string };
  readonly status: 'completed' | 'failed' | 'stopped';
}): EnqueueOptions | undefined {
  const { jobId, row, status } = options;
  const request = JSON.parse(row.request_json) as WorkRequest;
  if (request.webhook === undefined) return undefined;
  return options.webhooks.delivery({ url: request.webhook.url, subjectKind: 'background_job', body: { type: `background_job.${status}`, id: jobId, agentId: row.agent_id, status } });
}
