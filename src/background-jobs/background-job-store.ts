import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../clock.js';
import { claimCreationKey, type CreationKey } from '../durable/creation-keys.js';
import type { DurableWork } from '../durable/durable-work.js';
import { transactionWithJobs, type EnqueueWithin } from '../durable/transaction-with-jobs.js';
import type { WorkRequest } from '../turns/work-request.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import { appendJobEvent, type BackgroundJobEventBody } from './background-job-events.js';
import { toBackgroundJobRecord, type BackgroundJobRecord } from './background-job-record.js';
import type { BackgroundJobTables } from './background-job-tables.js';
import type { JobFinishOutcome } from './drive-background-job.js';
import { jobEndWebhook } from './job-end-webhook.js';
import { wakeJob } from './wake-job.js';

/**
 * The jobs and their queued messages as the service reads and changes them: a new job, its
 * record, a message for its next turn, and its end. Each change of a job that may have ended
 * meanwhile is made only while it runs, and says whether it was. A change that calls for more
 * work commits with it: a new job with its `job.started` event and the job that wakes a driver,
 * an end with its terminal event and its webhook.
 */
export class BackgroundJobStore {
  readonly #db: Kysely<BackgroundJobTables>;
  readonly #clock: Clock;
  readonly #durable: DurableWork;
  readonly #webhooks: WebhookService;

  constructor(options: { readonly db: Kysely<BackgroundJobTables>; readonly clock: Clock; readonly durable: DurableWork; readonly webhooks: WebhookService }) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#durable = options.durable;
    this.#webhooks = options.webhooks;
  }

  #transaction<T>(write: (trx: Transaction<BackgroundJobTables>, enqueue: EnqueueWithin) => Promise<T>): Promise<T> {
    return transactionWithJobs({ db: this.#db, durable: this.#durable }, write);
  }

  /**
   * Stores a new running job that no process drives yet, its `job.started` event, and the job
   * that wakes a driver for it. A job started by a tool call is keyed by its turn and call: a
   * second insert for the same call answers the first job's id instead.
   */
  async insert(options: {
    readonly id: string;
    readonly request: WorkRequest;
    readonly title: string;
    readonly instructions: string;
    readonly sourceTurnId?: string | undefined;
    readonly sourceCallId?: string | undefined;
    readonly key?: CreationKey | undefined;
    readonly createdAt: string;
  }): Promise<{ readonly id: string; readonly created: boolean }> {
    const { sourceTurnId, sourceCallId } = options;
    const bySource = async (): Promise<string | undefined> => {
      if (sourceTurnId === undefined || sourceCallId === undefined) return undefined;
      const row = await this.#db.selectFrom('background_jobs').select('id').where('source_turn_id', '=', sourceTurnId).where('source_call_id', '=', sourceCallId).executeTakeFirst();
      return row?.id;
    };
    const existing = await bySource();
    if (existing !== undefined) return { id: existing, created: false };
    try {
      return await this.#insertNew(options);
    } catch (error) {
      // Two inserts for one call raced: the unique index let one through.
      const raced = await bySource();
      if (raced !== undefined) return { id: raced, created: false };
      throw error;
    }
  }

  async #insertNew(options: Parameters<BackgroundJobStore['insert']>[0]): Promise<{ readonly id: string; readonly created: boolean }> {
    const { request, key } = options;
    return this.#transaction(async (trx, enqueue) => {
      const earlier = key === undefined ? undefined : await claimCreationKey(trx, { kind: 'background_job', key, resourceId: options.id, createdAt: options.createdAt });
      if (earlier !== undefined) return { id: earlier, created: false };
      await trx
        .insertInto('background_jobs')
        .values({
          id: options.id,
          agent_id: request.agent.id,
          title: options.title,
          instructions: options.instructions,
          request_json: JSON.stringify(request),
          status: 'running',
          output: null,
          error_json: null,
          message_count: 0,
          owner: null,
          heartbeat_at: null,
          source_turn_id: options.sourceTurnId ?? null,
          source_call_id: options.sourceCallId ?? null,
          created_at: options.createdAt,
          finished_at: null,
        })
        .execute();
      await appendJobEvent({ db: trx, clock: this.#clock, jobId: options.id, body: { type: 'job.started', agentId: request.agent.id, title: options.title } });
      await enqueue(wakeJob(options.id));
      return { id: options.id, created: true };
    });
  }

  /**
   * Forgets jobs that ended before `before` (ISO 8601), in bounded batches: first up to `limit`
   * of their events, then up to `limit` of those jobs with no events left (their turns and
   * messages go with them). Answers the larger count (a full batch means there may be more).
   */
  async pruneFinished(options: { readonly before: string; readonly limit: number }): Promise<number> {
    const events = await this.#db
      .deleteFrom('background_job_events')
      .where((eb) =>
        eb(
          eb.refTuple('job_id', 'seq'),
          'in',
          eb
            .selectFrom('background_job_events as event')
            .innerJoin('background_jobs as job', 'job.id', 'event.job_id')
            .select(['event.job_id', 'event.seq'])
            .where('job.finished_at', '<', options.before)
            .limit(options.limit)
            .$asTuple('job_id', 'seq'),
        ),
      )
      .executeTakeFirst();
    const jobs = await this.#db
      .deleteFrom('background_jobs')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('background_jobs as job')
          .select('job.id')
          .where('job.finished_at', '<', options.before)
          .where((inner) => inner.not(inner.exists(inner.selectFrom('background_job_events').select('seq').whereRef('background_job_events.job_id', '=', 'job.id'))))
          .limit(options.limit),
      )
      .executeTakeFirst();
    return Math.max(Number(events.numDeletedRows), Number(jobs.numDeletedRows));
  }

  /** The job as shown, with its turns and waiting messages; undefined when there is none (of `agentId`, when given). */
  async readRecord(options: { readonly jobId: string; readonly agentId?: string | undefined }): Promise<BackgroundJobRecord | undefined> {
    const { jobId, agentId } = options;
    const row = await this.#db.selectFrom('background_jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
    if (row === undefined || (agentId !== undefined && row.agent_id !== agentId)) return undefined;
    const turns = await this.#db.selectFrom('background_job_turns').selectAll().where('job_id', '=', jobId).orderBy('turn_index').execute();
    const pending = await this.#db.selectFrom('background_job_messages').select((eb) => eb.fn.countAll().as('count')).where('job_id', '=', jobId).where('turn_index', 'is', null).executeTakeFirst();
    return toBackgroundJobRecord(row, turns, Number(pending?.count ?? 0));
  }

  /** The ids of the agent's jobs, newest first. */
  async listIds(options: { readonly agentId: string; readonly limit: number }): Promise<string[]> {
    const rows = await this.#db.selectFrom('background_jobs').select('id').where('agent_id', '=', options.agentId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
    return rows.map((row) => row.id);
  }

  /** The job's status and agent, to say why it cannot be changed; undefined when there is none. */
  async readStatus(jobId: string): Promise<{ status: string; agent_id: string } | undefined> {
    return this.#db.selectFrom('background_jobs').select(['status', 'agent_id']).where('id', '=', jobId).executeTakeFirst();
  }

  /** Queues a message for the job's next turn, with its `job.message_queued` event; false unless the job (of `agentId`, when given) runs. */
  async queueMessage(options: { readonly jobId: string; readonly messageId: string; readonly text: string; readonly agentId?: string | undefined }): Promise<boolean> {
    const { jobId } = options;
    return this.#db.transaction().execute(async (trx) => {
      // Counting first locks the job row: the driver's "no message came" completion check sees this one.
      const result = await trx
        .updateTable('background_jobs')
        .set((eb) => ({ message_count: eb('message_count', '+', 1) }))
        .where('id', '=', jobId)
        .where('status', '=', 'running')
        .$if(options.agentId !== undefined, (query) => query.where('agent_id', '=', options.agentId ?? ''))
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await trx.insertInto('background_job_messages').values({ id: options.messageId, job_id: jobId, text: options.text, turn_index: null, created_at: this.#clock.now().toISOString() }).execute();
      await appendJobEvent({ db: trx, clock: this.#clock, jobId, body: { type: 'job.message_queued', messageId: options.messageId, text: options.text } });
      return true;
    });
  }

  /** Ends the job `stopped`, with its `job.stopped` event and its webhook; false unless the job (of `agentId`, when given) runs. */
  markStopped(options: { readonly jobId: string; readonly agentId?: string | undefined }): Promise<boolean> {
    return this.#transaction(async (trx, enqueue) => {
      const result = await trx
        .updateTable('background_jobs')
        .set({ status: 'stopped', finished_at: this.#clock.now().toISOString() })
        .where('id', '=', options.jobId)
        .where('status', '=', 'running')
        .$if(options.agentId !== undefined, (query) => query.where('agent_id', '=', options.agentId ?? ''))
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await this.#announceEnd(trx, enqueue, options.jobId, 'stopped', { type: 'job.stopped' });
      return true;
    });
  }

  /**
   * Ends the job as its driver says, with its terminal event and its webhook, if it still runs
   * and, for completion, no message came since; false otherwise.
   */
  markFinished(options: { readonly jobId: string; readonly outcome: JobFinishOutcome }): Promise<boolean> {
    const { outcome, jobId } = options;
    const finishedAt = this.#clock.now().toISOString();
    return this.#transaction(async (trx, enqueue) => {
      const query = trx.updateTable('background_jobs').where('id', '=', jobId).where('status', '=', 'running');
      const result =
        outcome.status === 'completed'
          ? await query.set({ status: 'completed', output: outcome.output, finished_at: finishedAt }).where('message_count', '=', outcome.messageCount).executeTakeFirst()
          : await query.set({ status: 'failed', error_json: JSON.stringify(outcome.error), finished_at: finishedAt }).executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await this.#announceEnd(trx, enqueue, jobId, outcome.status, outcome.status === 'completed' ? { type: 'job.completed', output: outcome.output } : { type: 'job.failed', error: outcome.error });
      return true;
    });
  }

  async #announceEnd(trx: Transaction<BackgroundJobTables>, enqueue: EnqueueWithin, jobId: string, status: 'completed' | 'failed' | 'stopped', body: BackgroundJobEventBody): Promise<void> {
    await appendJobEvent({ db: trx, clock: this.#clock, jobId, body });
    const row = await trx.selectFrom('background_jobs').select(['agent_id', 'request_json']).where('id', '=', jobId).executeTakeFirstOrThrow();
    const webhook = jobEndWebhook({ webhooks: this.#webhooks, jobId, row, status });
    if (webhook !== undefined) await enqueue(webhook);
  }
}
