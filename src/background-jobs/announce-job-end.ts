import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { WorkRequest } from '../turns/work-request.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import { appendJobEvent, type BackgroundJobEventBody } from './background-job-events.js';
import type { BackgroundJobTables } from './background-job-tables.js';

/** Tells of a job that has just ended: its terminal event, then its webhook when it has one. */
export async function announceJobEnd(options: {
  readonly db: Kysely<BackgroundJobTables>;
  readonly clock: Clock;
  readonly webhooks: WebhookService;
  readonly jobId: string;
  readonly status: 'completed' | 'failed' | 'stopped';
  readonly body: BackgroundJobEventBody;
}): Promise<void> {
  const { db, jobId, status } = options;
  await appendJobEvent({ db, clock: options.clock, jobId, body: options.body });
  const row = await db.selectFrom('background_jobs').select(['agent_id', 'request_json']).where('id', '=', jobId).executeTakeFirst();
  if (row === undefined) return;
  const request = JSON.parse(row.request_json) as WorkRequest;
  if (request.webhook === undefined) return;
  await options.webhooks.send({ url: request.webhook.url, subjectKind: 'background_job', body: { type: `background_job.${status}`, id: jobId, agentId: row.agent_id, status } });
}
