import type { Kysely } from 'kysely';
import type { ScheduleTables } from './schedule-tables.js';

type ScheduleRow = ScheduleTables['schedules'];
type FireRow = ScheduleTables['schedule_fires'];

/**
 * Schedules and their fires as the service reads and changes them. A change of a schedule is
 * made at the generation it was read at (compare and set): pause and resume bump it, so a
 * fire queued before either is recognised as stale.
 */
export class ScheduleStore {
  readonly #db: Kysely<ScheduleTables>;

  constructor(options: { readonly db: Kysely<ScheduleTables> }) {
    this.#db = options.db;
  }

  async insert(row: ScheduleRow): Promise<void> {
    await this.#db.insertInto('schedules').values(row).execute();
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

  /** Changes the schedule if it is still at `generation`; false when it was not. */
  async changeAtGeneration(options: { readonly id: string; readonly generation: number; readonly set: Pick<ScheduleRow, 'status' | 'next_fire_at' | 'generation'> }): Promise<boolean> {
    const result = await this.#db.updateTable('schedules').set(options.set).where('id', '=', options.id).where('generation', '=', options.generation).executeTakeFirst();
    return result.numUpdatedRows > 0n;
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
   * and set, at `generation`) and records the fire, in one transaction. False when another
   * delivery claimed it first or the schedule changed meanwhile.
   */
  async claimFire(options: {
    readonly scheduleId: string;
    readonly generation: number;
    readonly dueAt: string;
    readonly next: Pick<ScheduleRow, 'next_fire_at' | 'status'>;
    readonly fire: Pick<FireRow, 'at' | 'outcome'>;
  }): Promise<boolean> {
    const { scheduleId, dueAt } = options;
    return this.#db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('schedules')
        .set({ next_fire_at: options.next.next_fire_at, status: options.next.status })
        .where('id', '=', scheduleId)
        .where('status', '=', 'active')
        .where('next_fire_at', '=', dueAt)
        .where('generation', '=', options.generation)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await trx.insertInto('schedule_fires').values({ schedule_id: scheduleId, due_at: dueAt, at: options.fire.at, outcome: options.fire.outcome, turn_id: null, error: null }).execute();
      return true;
    });
  }

  /** Sets when the fire was last handled: a fire waiting behind earlier ones says it is alive. */
  async touchFire(options: { readonly scheduleId: string; readonly dueAt: string; readonly at: string }): Promise<void> {
    await this.#db.updateTable('schedule_fires').set({ at: options.at }).where('schedule_id', '=', options.scheduleId).where('due_at', '=', options.dueAt).execute();
  }

  /** Records the turn the fire started. */
  async markFireStarted(options: { readonly scheduleId: string; readonly dueAt: string; readonly turnId: string }): Promise<void> {
    await this.#db.updateTable('schedule_fires').set({ outcome: 'started', turn_id: options.turnId }).where('schedule_id', '=', options.scheduleId).where('due_at', '=', options.dueAt).execute();
  }

  /** Records why the fire could not start its turn. */
  async markFireFailed(options: { readonly scheduleId: string; readonly dueAt: string; readonly error: string }): Promise<void> {
    await this.#db.updateTable('schedule_fires').set({ outcome: 'failed', error: options.error }).where('schedule_id', '=', options.scheduleId).where('due_at', '=', options.dueAt).execute();
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
