import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Clock } from '../clock.js';
import type { BackgroundJobTables } from './background-job-tables.js';

const errorSchema = z.object({ code: z.string(), message: z.string() });
const head = { jobId: z.string(), seq: z.number().int(), at: z.string() };

/** A background job's events, as `GET /background-jobs/:id/events` streams them. */
export const backgroundJobEventSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('job.started'), ...head, agentId: z.string(), title: z.string() }),
    z.object({ type: z.literal('job.message_queued'), ...head, messageId: z.string(), text: z.string() }),
    z.object({ type: z.literal('job.turn_started'), ...head, turnId: z.string(), turnIndex: z.number().int(), messageIds: z.array(z.string()) }),
    z.object({
      type: z.literal('job.turn_finished'),
      ...head,
      turnId: z.string(),
      turnIndex: z.number().int(),
      outcome: z.enum(['completed', 'failed', 'interrupted', 'stopped']),
      output: z.string().nullable(),
    }),
    z.object({ type: z.literal('job.completed'), ...head, output: z.string().nullable() }),
    z.object({ type: z.literal('job.failed'), ...head, error: errorSchema }),
    z.object({ type: z.literal('job.stopped'), ...head }),
    z.object({
      type: z.enum(['webhook.delivered', 'webhook.retrying', 'webhook.failed']),
      ...head,
      webhookId: z.string(),
      attempt: z.number().int(),
      url: z.string(),
      statusCode: z.number().int().nullable(),
      error: z.string().nullable(),
    }),
  ])
  .meta({ id: 'BackgroundJobEvent' });

export type BackgroundJobEvent = z.infer<typeof backgroundJobEventSchema>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type BackgroundJobEventBody = DistributiveOmit<BackgroundJobEvent, 'jobId' | 'seq' | 'at'>;

export const JOB_TERMINAL_EVENTS: ReadonlySet<string> = new Set(['job.completed', 'job.failed', 'job.stopped']);

/** An event as stored: its JSON text is served as is. */
export interface StoredJobEvent {
  readonly seq: number;
  readonly type: string;
  readonly json: string;
}

/**
 * Appends an event to the job's log, numbered after the last one. In the caller's transaction
 * when `db` is one (so the event commits with the change it tells of), else in its own. The
 * job's row is locked first, so appenders of one job take turns and the next number is free.
 */
export async function appendJobEvent(options: { readonly db: Kysely<BackgroundJobTables>; readonly clock: Clock; readonly jobId: string; readonly body: BackgroundJobEventBody }): Promise<void> {
  const { db, jobId } = options;
  if (!db.isTransaction) {
    await db.transaction().execute((trx) => appendJobEvent({ ...options, db: trx }));
    return;
  }
  await db.updateTable('background_jobs').set((eb) => ({ message_count: eb.ref('message_count') })).where('id', '=', jobId).execute();
  const last = await db.selectFrom('background_job_events').select((eb) => eb.fn.max('seq').as('seq')).where('job_id', '=', jobId).executeTakeFirst();
  const seq = (last?.seq ?? 0) + 1;
  const { type, ...fields } = options.body;
  const event = { type, jobId, seq, at: options.clock.now().toISOString(), ...fields };
  await db.insertInto('background_job_events').values({ job_id: jobId, seq, type, body: JSON.stringify(event) }).execute();
}

export async function listJobEvents(options: { readonly db: Kysely<BackgroundJobTables>; readonly jobId: string; readonly afterSeq: number; readonly limit: number }): Promise<StoredJobEvent[]> {
  const rows = await options.db
    .selectFrom('background_job_events')
    .select(['seq', 'type', 'body'])
    .where('job_id', '=', options.jobId)
    .where('seq', '>', options.afterSeq)
    .orderBy('seq')
    .limit(options.limit)
    .execute();
  return rows.map((row) => ({ seq: row.seq, type: row.type, json: row.body }));
}

/** Whether the job's terminal event has a seq below `seq`. */
export async function jobEndedBefore(options: { readonly db: Kysely<BackgroundJobTables>; readonly jobId: string; readonly seq: number }): Promise<boolean> {
  // From the end of the job's events (its end is at or near the last), on their primary key.
  const row = await options.db
    .selectFrom('background_job_events')
    .select('seq')
    .where('job_id', '=', options.jobId)
    .where('type', 'in', [...JOB_TERMINAL_EVENTS])
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined && row.seq < options.seq;
}
