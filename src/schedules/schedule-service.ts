import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Creation, CreationKey } from '../durable/creation-keys.js';
import type { DurableWork } from '../durable/durable-work.js';
import { ServiceError } from '../service-error.js';
import type { TurnStore } from '../store/turn-store.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import { checkNewSchedule, type NewSchedule } from './check-new-schedule.js';
import { nextCronFire } from './cron-timing.js';
import { describeFireTime } from './describe-fire-time.js';
import { fireSchedule } from './fire-schedule.js';
import { ScheduleFireQueue } from './schedule-fire-queue.js';
import { toScheduleRecord, type ScheduleRecord } from './schedule-record.js';
import { ScheduleStore } from './schedule-store.js';
import type { ScheduleTables } from './schedule-tables.js';
import { startFireTurn, type ScheduleTurnStarter } from './start-fire-turn.js';

export const MAX_LISTED_SCHEDULES = 100;

export const scheduleNotFound = (id: string) => new ServiceError({ statusCode: 404, code: 'schedule_not_found', message: `no schedule with id "${id.slice(0, 200)}"` });

/**
 * Schedules: each fire is a durable job due at its time; whichever worker of whichever
 * replica takes it claims the fire by moving the schedule's `next_fire_at` on (compare and
 * set), so a fire starts at most one turn however often its job is delivered.
 */
export class ScheduleService {
  readonly #webhooks: WebhookService;
  readonly #store: TurnStore;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #schedules: ScheduleStore;
  readonly #fireQueue: ScheduleFireQueue;
  #turns: ScheduleTurnStarter | undefined;

  constructor(options: { readonly db: Kysely<ScheduleTables>; readonly durable: DurableWork; readonly webhooks: WebhookService; readonly store: TurnStore; readonly clock: Clock; readonly logger: Logger }) {
    this.#webhooks = options.webhooks;
    this.#store = options.store;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#schedules = new ScheduleStore({ db: options.db, durable: options.durable });
    this.#fireQueue = new ScheduleFireQueue({ durable: options.durable, schedules: this.#schedules, logger: options.logger });
  }

  async start(options: { readonly turns: ScheduleTurnStarter }): Promise<void> {
    this.#turns = options.turns;
    await this.#fireQueue.start({
      fire: (payload) => fireSchedule({ payload, schedules: this.#schedules, turnStore: this.#store, clock: this.#clock }),
      start: (payload) => startFireTurn({ start: payload, schedules: this.#schedules, turnStore: this.#store, turns: this.#turns, clock: this.#clock, logger: this.#logger }),
    });
  }

  /** Forgets fires handled before `before`, at most `limit` (see ScheduleStore.pruneFires). */
  pruneFires(options: { readonly before: string; readonly limit: number }): Promise<number> {
    return this.#schedules.pruneFires(options);
  }

  close(): void {
    this.#fireQueue.close();
  }

  /** Checks and stores a schedule and queues its first fire. Bad input is a 400 naming the field. */
  async create(input: NewSchedule, key?: CreationKey): Promise<Creation<ScheduleRecord>> {
    const now = this.#clock.now();
    const { timeZone, firstFire } = checkNewSchedule({ input, now, webhooks: this.#webhooks });
    const id = `sched_${randomUUID().replaceAll('-', '')}`;
    const row: ScheduleTables['schedules'] = {
      id,
      agent_id: input.request.agent.id,
      kind: input.kind,
      at: input.kind === 'once' ? firstFire.toISOString() : null,
      cron: input.kind === 'cron' ? (input.cron ?? '').trim().split(/\s+/).join(' ') : null,
      time_zone: timeZone,
      prompt: input.prompt,
      request_json: JSON.stringify(input.request),
      overlap: input.overlap ?? 'skip',
      missed: input.missed ?? 'run_once',
      status: 'active',
      next_fire_at: firstFire.toISOString(),
      generation: 0,
      source_turn_id: input.sourceTurnId ?? null,
      source_call_id: input.sourceCallId ?? null,
      created_at: now.toISOString(),
    };
    // Stored with its first fire's job (or, for a tool call made again or a key sent again, the schedule it made the first time).
    const stored = await this.#schedules.insert(row, key);
    return { record: await this.get(stored.id), replayed: !stored.created };
  }

  async get(id: string, agentId?: string): Promise<ScheduleRecord> {
    const row = await this.#row(id, agentId);
    const fires = await this.#schedules.listRecentFires(id);
    const next = row.next_fire_at === null ? null : describeFireTime({ at: new Date(row.next_fire_at), timeZone: row.time_zone, now: this.#clock.now() });
    return toScheduleRecord(row, fires, next);
  }

  async list(options: { readonly agentId: string; readonly kind?: 'once' | 'cron' }): Promise<ScheduleRecord[]> {
    const ids = await this.#schedules.listIds({ agentId: options.agentId, kind: options.kind, limit: MAX_LISTED_SCHEDULES });
    return Promise.all(ids.map((id) => this.get(id)));
  }

  /** No fire until resumed; a paused or finished schedule is answered as it is. */
  async pause(id: string, agentId?: string): Promise<ScheduleRecord> {
    const row = await this.#row(id, agentId);
    if (row.status === 'active') {
      await this.#schedules.changeAtGeneration({ id, generation: row.generation, set: { status: 'paused', next_fire_at: null, generation: row.generation + 1 } });
    }
    return this.get(id);
  }

  /** Fires again from now on (a once schedule past its time fires now, by its `missed` policy). */
  async resume(id: string, agentId?: string): Promise<ScheduleRecord> {
    const row = await this.#row(id, agentId);
    if (row.status === 'paused') {
      const next = row.kind === 'once' ? row.at : (nextCronFire({ expression: row.cron ?? '', timeZone: row.time_zone, after: this.#clock.now() })?.toISOString() ?? null);
      const updated: ScheduleTables['schedules'] = { ...row, status: next === null ? 'done' : 'active', next_fire_at: next, generation: row.generation + 1 };
      // Changed with its next fire's job.
      await this.#schedules.changeAtGeneration({ id, generation: row.generation, set: { status: updated.status, next_fire_at: next, generation: updated.generation } });
    }
    return this.get(id);
  }

  async remove(id: string, agentId?: string): Promise<void> {
    await this.#row(id, agentId);
    await this.#schedules.remove(id);
  }

  async #row(id: string, agentId: string | undefined): Promise<ScheduleTables['schedules']> {
    const row = await this.#schedules.readRow(id);
    if (row === undefined || (agentId !== undefined && row.agent_id !== agentId)) throw scheduleNotFound(id);
    return row;
  }
}
