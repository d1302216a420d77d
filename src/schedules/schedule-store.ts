import type { Kysely, Transaction } from 'kysely';
import { claimCreationKey, type CreationKey } from '../durable/creation-keys.js';
import type { DurableWork } from '../durable/durable-work.js';
import { transactionWithJobs, type EnqueueWithin } from '../durable/transaction-with-jobs.js';
import { fireJob, fireStartJob, type FireStartPayload } from './schedule-jobs.js';
import type { ScheduleTables } from './schedule-tables.js';

type ScheduleRow = ScheduleTables['schedules'];
type FireRow = ScheduleTables['schedule_fires'];

/**
 * Schedules and their fires as the service reads and changes them. A change of a schedule is
 * made at the generation it was read at (compare and set): pause and resume bump it, so a
 * fire queued before either is recognised as stale. A change that calls for a fire's job
 * commits with it: a new or resumed schedule with its next fire, a claimed fire with the next
 * one and the job that starts its turn.
 */
export class ScheduleStore {
  readonly #db: Kysely<ScheduleTables>;
  readonly #durable: DurableWork;

  constructor(options: { readonly db: Kysely<ScheduleTables>; readonly durable: DurableWork }) {
    this.#db = options.db;
    this.#durable = options.durable;
  }

  #transaction<T>(write: (trx: Transaction<ScheduleTables>, enqueue: EnqueueWithin) => Promise<T>): Promise<T> {
    return transactionWithJobs({ db: this.#db, durable: this.#durable }, write);
  }

  /**
   * Stores a schedule with the job of its first fire, and answers its id. A schedule made by a
   * tool call is keyed by its turn and call, one made over HTTP by its `Idempotency-Key` when it
   * has one: a second insert for the same call or key answers the first schedule's id instead.
   */
  async insert(row: ScheduleRow, key?: CreationKey): Promise<{ readonly id: string; readonly created: boolean }> {
    const bySource = async (): Promise<string | undefined> => {
      if (row.source_turn_id === null || row.source_call_id === null) return undefined;
      const found = await this.#db.selectFrom('schedules').select('id').where('source_turn_id', '=', row.source_turn_id).where('source_call_id', '=', row.source_call_id).executeTakeFirst();
      return found?.id;
    };
    const existing = await bySource();
    if (existing !== undefined) return { id: existing, created: false };
    try {
      return await this.#transaction(async (trx, enqueue) => {
        const earlier = key === undefined ? undefined : await claimCreationKey(trx, { kind: 'schedule', key, resourceId: row.id, createdAt: row.created_at });
        if (earlier !== undefined) return { id: earlier, created: false };
        await trx.insertInto('schedules').values(row).execute();
        const job = fireJob(row);
        if (job !== undefined) await enqueue(job);
        return { id: row.id, created: true };
      });
    } catch (error) {
      // Two inserts for one call raced: the unique index let one through.
      const raced = await bySource();
      if (raced !== undefined) return { id: raced, created: false };
      throw error;
    }
  }

  /** Forgets up to `limit` fires handled before `before` (ISO 8601), but none still starting; answers how many. */
  async pruneFires(options: { readonly before: string; readonly limit: number }): Promise<number> {
    const deleted = await this.#db
      .deleteFrom('schedule_fires')
      .where((eb) =>
        eb(
          eb.refTuple('schedule_id', 'due_at'),
          'in',
          eb.selectFrom('schedule_fires as fire').select(['fire.schedule_id', 'fire.due_at']).where('fire.at', '<', options.before).where('fire.outcome', '!=', 'starting').limit(options.limit).$asTuple('schedule_id', 'due_at'),
        ),
      )
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }

  async readRow(id: string): Promise<ScheduleRow | undefined> {
    return this.#db.selectFrom('schedules').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The schedule's last 20 fires, newest first. */
  async listRecentFires(id: string): Promise<FireRow[]> {
    return this.#db.selectFrom('schedule_fires').selectAll().where('schedule_id', '=', id).orderBy('due_at', 'desc').limit(20).execute();
  }

  /** The ids of the agent's schedules (of `kind`, when given), newest first. */
  async listIds(options: { readonly agentId: string; readonly kind?: 'once' | 'cron' | undefined; readonly limit: number }): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('schedules')
      .select('id')
      .where('agent_id', '=', options.agentId)
      .$if(options.kind !== undefined, (query) => query.where('kind', '=', options.kind ?? ''))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(options.limit)
      .execute();
    return rows.map((row) => row.id);
  }

  /** Changes the schedule if it is still at `generation`, with the job of the next fire that leaves it; false when it was not. */
  changeAtGeneration(options: { readonly id: string; readonly generation: number; readonly set: Pick<ScheduleRow, 'status' | 'next_fire_at' | 'generation'> }): Promise<boolean> {
    return this.#transaction(async (trx, enqueue) => {
      const result = await trx.updateTable('schedules').set(options.set).where('id', '=', options.id).where('generation', '=', options.generation).executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      const job = fireJob({ id: options.id, ...options.set });
      if (job !== undefined) await enqueue(job);
      return true;
    });
  }

  /** Deletes the schedule and its fires. */
  async remove(id: string): Promise<void> {
    await this.#db.deleteFrom('schedule_fires').where('schedule_id', '=', id).execute();
    await this.#db.deleteFrom('schedules').where('id', '=', id).execute();
  }

  /** Every active schedule, as much of it as queueing its next fire needs. */
  async listActive(): Promise<Pick<ScheduleRow, 'id' | 'status' | 'next_fire_at' | 'generation'>[]> {
    return this.#db.selectFrom('schedules').select(['id', 'status', 'next_fire_at', 'generation']).where('status', '=', 'active').execute();
  }

  /**
   * Claims the fire due at `dueAt`: moves the active schedule's next fire on from it (compare
   * and set, at `generation`) and records the fire, with the job of the next fire and, for a
   * fire that starts a turn, the turn's id and the job that starts it, in one transaction.
   * False when another delivery claimed it first or the schedule changed meanwhile.
   */
  claimFire(options: {
    readonly scheduleId: string;
    readonly generation: number;
    readonly dueAt: string;
    readonly next: Pick<ScheduleRow, 'next_fire_at' | 'status'>;
    readonly fire: Pick<FireRow, 'at' | 'outcome' | 'turn_id'>;
  }): Promise<boolean> {
    const { scheduleId, dueAt } = options;
    return this.#transaction(async (trx, enqueue) => {
      const result = await trx
        .updateTable('schedules')
        .set({ next_fire_at: options.next.next_fire_at, status: options.next.status })
        .where('id', '=', scheduleId)
        .where('status', '=', 'active')
        .where('next_fire_at', '=', dueAt)
        .where('generation', '=', options.generation)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await trx.insertInto('schedule_fires').values({ schedule_id: scheduleId, due_at: dueAt, at: options.fire.at, outcome: options.fire.outcome, turn_id: options.fire.turn_id, error: null }).execute();
      const next = fireJob({ id: scheduleId, status: options.next.status, next_fire_at: options.next.next_fire_at, generation: options.generation });
      if (next !== undefined) await enqueue(next);
      if (options.fire.outcome === 'starting') await enqueue(fireStartJob({ scheduleId, dueAt }));
      return true;
    });
  }

  /** The fire of the schedule due at `dueAt`. */
  readFire(options: { readonly scheduleId: string; readonly dueAt: string }): Promise<FireRow | undefined> {
    return this.#db.selectFrom('schedule_fires').selectAll().where('schedule_id', '=', options.scheduleId).where('due_at', '=', options.dueAt).executeTakeFirst();
  }

  /**
   * A fire that cannot start yet (behind earlier fires, or the service full): says it is alive
   * and has its start job look again at `runAt`, in one transaction. No handler waits meanwhile.
   */
  async putOffFire(options: { readonly start: FireStartPayload; readonly at: string; readonly runAt: Date }): Promise<void> {
    const { start } = options;
    await this.#transaction(async (trx, enqueue) => {
      await trx.updateTable('schedule_fires').set({ at: options.at }).where('schedule_id', '=', start.scheduleId).where('due_at', '=', start.dueAt).execute();
      await enqueue(fireStartJob(start, options.runAt));
    });
  }

  /** Records that the fire's turn started (its id was recorded when the fire was claimed). */
  async markFireStarted(options: { readonly scheduleId: string; readonly dueAt: string }): Promise<void> {
    await this.#db.updateTable('schedule_fires').set({ outcome: 'started' }).where('schedule_id', '=', options.scheduleId).where('due_at', '=', options.dueAt).where('outcome', '=', 'starting').execute();
  }

  /** Records why the fire could not start its turn (it has none). */
  async markFireFailed(options: { readonly scheduleId: string; readonly dueAt: string; readonly error: string }): Promise<void> {
    await this.#db
      .updateTable('schedule_fires')
      .set({ outcome: 'failed', turn_id: null, error: options.error })
      .where('schedule_id', '=', options.scheduleId)
      .where('due_at', '=', options.dueAt)
      .where('outcome', '=', 'starting')
      .execute();
  }

  /** Up to 5 fires due before `beforeDueAt` that were starting or started a turn, newest first. */
  async listEarlierActiveFires(options: { readonly scheduleId: string; readonly beforeDueAt: string }): Promise<Pick<FireRow, 'outcome' | 'turn_id' | 'at'>[]> {
    return this.#db
      .selectFrom('schedule_fires')
      .select(['outcome', 'turn_id', 'at'])
      .where('schedule_id', '=', options.scheduleId)
      .where('due_at', '<', options.beforeDueAt)
      .where('outcome', 'in', ['starting', 'started'])
      .orderBy('due_at', 'desc')
      .limit(5)
      .execute();
  }
}
