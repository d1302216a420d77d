import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { WorkRequest } from '../turns/work-request.js';
import { toBackgroundJobRecord, type BackgroundJobRecord } from './background-job-record.js';
import type { BackgroundJobTables } from './background-job-tables.js';
import type { JobFinishOutcome } from './drive-background-job.js';

/**
 * The jobs and their queued messages as the service reads and changes them: a new job, its
 * record, a message for its next turn, and its end. Each change of a job that may have ended
 * meanwhile is made only while it runs, and says whether it was.
 */
export class BackgroundJobStore {
  readonly #db: Kysely<BackgroundJobTables>;
  readonly #clock: Clock;

  constructor(options: { readonly db: Kysely<BackgroundJobTables>; readonly clock: Clock }) {
    this.#db = options.db;
    this.#clock = options.clock;
  }

  /** Stores a new running job that no process drives yet. */
  async insert(options: { readonly id: string; readonly request: WorkRequest; readonly title: string; readonly instructions: string; readonly sourceTurnId?: string | undefined; readonly sourceCallId?: string | undefined; readonly createdAt: string }): Promise<void> {
    const { request } = options;
    await this.#db
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

  /** Queues a message for the job's next turn; false unless the job (of `agentId`, when given) runs. */
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
      return true;
    });
  }

  /** Ends the job `stopped`; false unless the job (of `agentId`, when given) runs. */
  async markStopped(options: { readonly jobId: string; readonly agentId?: string | undefined }): Promise<boolean> {
    const result = await this.#db
      .updateTable('background_jobs')
      .set({ status: 'stopped', finished_at: this.#clock.now().toISOString() })
      .where('id', '=', options.jobId)
      .where('status', '=', 'running')
      .$if(options.agentId !== undefined, (query) => query.where('agent_id', '=', options.agentId ?? ''))
      .executeTakeFirst();
    return result.numUpdatedRows !== 0n;
  }

  /** Ends the job as its driver says, if it still runs and, for completion, no message came since; false otherwise. */
  async markFinished(options: { readonly jobId: string; readonly outcome: JobFinishOutcome }): Promise<boolean> {
    const { outcome } = options;
    const finishedAt = this.#clock.now().toISOString();
    const query = this.#db.updateTable('background_jobs').where('id', '=', options.jobId).where('status', '=', 'running');
    const result =
      outcome.status === 'completed'
        ? await query.set({ status: 'completed', output: outcome.output, finished_at: finishedAt }).where('message_count', '=', outcome.messageCount).executeTakeFirst()
        : await query.set({ status: 'failed', error_json: JSON.stringify(outcome.error), finished_at: finishedAt }).executeTakeFirst();
    return result.numUpdatedRows !== 0n;
  }
}
