import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { pause } from '../concurrency/wait.js';
import type { DurableWork } from '../durable/durable-work.js';
import { workRequestSchema, type WorkRequest } from '../turns/work-request.js';
import { invalidRequest, ServiceError } from '../service-error.js';
import type { TurnStore } from '../store/turn-store.js';
import type { StartTurnRequest } from '../turns/turn-origin.js';
import type { TurnRun } from '../turns/turn-run.js';
import { checkWebhookUrl } from '../webhooks/check-webhook-url.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import { checkTimeZone, nextCronFire, parseCron, ScheduleTimingError } from './cron-timing.js';
import { describeFireTime } from './describe-fire-time.js';
import { toScheduleRecord, type ScheduleRecord } from './schedule-record.js';
import type { ScheduleTables } from './schedule-tables.js';

const FIRE_QUEUE = 'schedule-fire';
/** A fire handled later than this after it was due counts as missed (the service was down). */
const MISSED_AFTER_MS = 5_000;
const SWEEP_MS = 60_000;
const OVERLAP_POLL_MS = 500;
const STARTING_STALE_MS = 60_000;
const MAX_DELAY_SECONDS = 366 * 86_400;
export const MAX_LISTED_SCHEDULES = 100;

export const scheduleNotFound = (id: string) => new ServiceError({ statusCode: 404, code: 'schedule_not_found', message: `no schedule with id "${id.slice(0, 200)}"` });

export interface NewSchedule {
  readonly request: WorkRequest;
  readonly kind: 'once' | 'cron';
  readonly at?: string | undefined;
  readonly delaySeconds?: number | undefined;
  readonly cron?: string | undefined;
  readonly timeZone?: string | undefined;
  readonly prompt: string;
  readonly overlap?: 'skip' | 'enqueue' | undefined;
  readonly missed?: 'skip' | 'run_once' | undefined;
  readonly sourceTurnId?: string;
}

/** Starts turns: the turn service, seen from a schedule. */
export interface ScheduleTurnStarter {
  startTurn(request: StartTurnRequest): Promise<TurnRun>;
}

interface FirePayload {
  readonly scheduleId: string;
  readonly dueAt: string;
  readonly generation: number;
}

/**
 * Schedules: each fire is a durable job due at its time; whichever worker of whichever
 * replica takes it claims the fire by moving the schedule's `next_fire_at` on (compare and
 * set), so a fire starts at most one turn however often its job is delivered.
 */
export class ScheduleService {
  readonly #db: Kysely<ScheduleTables>;
  readonly #durable: DurableWork;
  readonly #webhooks: WebhookService;
  readonly #store: TurnStore;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #stopping = new AbortController();
  readonly #timers: NodeJS.Timeout[] = [];
  #turns: ScheduleTurnStarter | undefined;

  constructor(options: { readonly db: Kysely<ScheduleTables>; readonly durable: DurableWork; readonly webhooks: WebhookService; readonly store: TurnStore; readonly clock: Clock; readonly logger: Logger }) {
    this.#db = options.db;
    this.#durable = options.durable;
    this.#webhooks = options.webhooks;
    this.#store = options.store;
    this.#clock = options.clock;
    this.#logger = options.logger;
  }

  async start(options: { readonly turns: ScheduleTurnStarter }): Promise<void> {
    this.#turns = options.turns;
    await this.#durable.defineQueue({ name: FIRE_QUEUE, policy: 'stately', leaseSeconds: 3_600, retryLimit: 3, retryDelaySeconds: 1, backoff: true });
    await this.#durable.work({ queue: FIRE_QUEUE, concurrency: 8, handler: (job) => this.#fire(job.payload as unknown as FirePayload) });
    await this.#sweep();
    const timer = setInterval(() => {
      this.#sweep().catch((error: unknown) => {
        this.#logger.warn({ err: error }, 'schedule sweep failed');
      });
    }, SWEEP_MS);
    timer.unref();
    this.#timers.push(timer);
  }

  close(): void {
    this.#stopping.abort();
    for (const timer of this.#timers) clearInterval(timer);
  }

  /** Checks and stores a schedule and queues its first fire. Bad input is a 400 naming the field. */
  async create(input: NewSchedule): Promise<ScheduleRecord> {
    const now = this.#clock.now();
    const timeZone = input.timeZone ?? 'UTC';
    const problem = (field: string, message: string): never => {
      throw invalidRequest([{ path: [field], message }]);
    };
    let firstFire: Date;
    try {
      checkTimeZone(timeZone);
      if (input.kind === 'once') {
        if (input.cron !== undefined) problem('cron', 'only for kind "cron"');
        if ((input.at === undefined) === (input.delaySeconds === undefined)) problem(input.at === undefined ? 'delaySeconds' : 'at', 'give exactly one of at and delaySeconds for kind "once"');
        if (input.delaySeconds !== undefined) {
          if (!Number.isInteger(input.delaySeconds) || input.delaySeconds < 1 || input.delaySeconds > MAX_DELAY_SECONDS) problem('delaySeconds', `must be a whole number of seconds from 1 to ${MAX_DELAY_SECONDS}`);
          firstFire = new Date(now.getTime() + input.delaySeconds * 1000);
        } else {
          const at = new Date(input.at ?? '');
          if (Number.isNaN(at.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(input.at ?? '')) problem('at', 'must be an ISO 8601 time with a zone, e.g. "2026-12-02T09:00:00+08:00"');
          if (at.getTime() <= now.getTime()) problem('at', `is in the past (now is ${now.toISOString()})`);
          if (at.getTime() > now.getTime() + MAX_DELAY_SECONDS * 1000) problem('at', 'is more than a year ahead');
          firstFire = at;
        }
      } else {
        if (input.at !== undefined) problem('at', 'only for kind "once"');
        if (input.delaySeconds !== undefined) problem('delaySeconds', 'only for kind "once"');
        if (input.cron === undefined) problem('cron', 'required for kind "cron"');
        const next = parseCron({ expression: input.cron ?? '', timeZone }).nextRun(now);
        if (next === null) problem('cron', 'never fires');
        firstFire = next ?? now;
      }
    } catch (error) {
      if (error instanceof ScheduleTimingError) throw invalidRequest([{ path: [error.field], message: error.message }]);
      throw error;
    }
    if (input.request.webhook !== undefined) {
      checkWebhookUrl({ url: input.request.webhook.url, allowHosts: this.#webhooks.allowHosts, secretConfigured: this.#webhooks.configured, path: ['webhook', 'url'] });
    }
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
      created_at: now.toISOString(),
    };
    await this.#db.insertInto('schedules').values(row).execute();
    await this.#queueFire(row);
    return this.get(id);
  }

  async get(id: string, agentId?: string): Promise<ScheduleRecord> {
    const row = await this.#db.selectFrom('schedules').selectAll().where('id', '=', id).executeTakeFirst();
    if (row === undefined || (agentId !== undefined && row.agent_id !== agentId)) throw scheduleNotFound(id);
    const fires = await this.#db.selectFrom('schedule_fires').selectAll().where('schedule_id', '=', id).orderBy('due_at', 'desc').limit(20).execute();
    const next = row.next_fire_at === null ? null : describeFireTime({ at: new Date(row.next_fire_at), timeZone: row.time_zone, now: this.#clock.now() });
    return toScheduleRecord(row, fires, next);
  }

  async list(options: { readonly agentId: string; readonly kind?: 'once' | 'cron' }): Promise<ScheduleRecord[]> {
    const rows = await this.#db
      .selectFrom('schedules')
      .select('id')
      .where('agent_id', '=', options.agentId)
      .$if(options.kind !== undefined, (query) => query.where('kind', '=', options.kind ?? ''))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(MAX_LISTED_SCHEDULES)
      .execute();
    return Promise.all(rows.map((row) => this.get(row.id)));
  }

  /** No fire until resumed; a paused or finished schedule is answered as it is. */
  async pause(id: string, agentId?: string): Promise<ScheduleRecord> {
    const row = await this.#row(id, agentId);
    if (row.status === 'active') {
      await this.#db.updateTable('schedules').set({ status: 'paused', next_fire_at: null, generation: row.generation + 1 }).where('id', '=', id).where('generation', '=', row.generation).execute();
    }
    return this.get(id);
  }

  /** Fires again from now on (a once schedule past its time fires now, by its `missed` policy). */
  async resume(id: string, agentId?: string): Promise<ScheduleRecord> {
    const row = await this.#row(id, agentId);
    if (row.status === 'paused') {
      const next = row.kind === 'once' ? row.at : (nextCronFire({ expression: row.cron ?? '', timeZone: row.time_zone, after: this.#clock.now() })?.toISOString() ?? null);
      const updated: ScheduleTables['schedules'] = { ...row, status: next === null ? 'done' : 'active', next_fire_at: next, generation: row.generation + 1 };
      const result = await this.#db.updateTable('schedules').set({ status: updated.status, next_fire_at: next, generation: updated.generation }).where('id', '=', id).where('generation', '=', row.generation).executeTakeFirst();
      if (result.numUpdatedRows > 0n) await this.#queueFire(updated);
    }
    return this.get(id);
  }

  async remove(id: string, agentId?: string): Promise<void> {
    await this.#row(id, agentId);
    await this.#db.deleteFrom('schedule_fires').where('schedule_id', '=', id).execute();
    await this.#db.deleteFrom('schedules').where('id', '=', id).execute();
  }

  async #row(id: string, agentId: string | undefined): Promise<ScheduleTables['schedules']> {
    const row = await this.#db.selectFrom('schedules').selectAll().where('id', '=', id).executeTakeFirst();
    if (row === undefined || (agentId !== undefined && row.agent_id !== agentId)) throw scheduleNotFound(id);
    return row;
  }

  async #queueFire(row: Pick<ScheduleTables['schedules'], 'id' | 'status' | 'next_fire_at' | 'generation'>): Promise<void> {
    if (row.status !== 'active' || row.next_fire_at === null) return;
    const payload: FirePayload = { scheduleId: row.id, dueAt: row.next_fire_at, generation: row.generation };
    await this.#durable.enqueue({ queue: FIRE_QUEUE, payload: { ...payload }, runAt: new Date(row.next_fire_at), singletonKey: `${row.id}:${payload.generation}:${payload.dueAt}` });
  }

  /** Queues the next fire of every active schedule (deduplicated): a fire lost between claim and queue is found here. */
  async #sweep(): Promise<void> {
    const rows = await this.#db.selectFrom('schedules').select(['id', 'status', 'next_fire_at', 'generation']).where('status', '=', 'active').execute();
    for (const row of rows) await this.#queueFire(row);
  }

  async #fire(payload: FirePayload): Promise<void> {
    const row = await this.#db.selectFrom('schedules').selectAll().where('id', '=', payload.scheduleId).executeTakeFirst();
    if (row?.status !== 'active' || row.next_fire_at !== payload.dueAt || row.generation !== payload.generation) return;
    const now = this.#clock.now();
    const due = new Date(payload.dueAt);
    const missed = now.getTime() - due.getTime() > MISSED_AFTER_MS;
    const next = row.kind === 'cron' ? nextCronFire({ expression: row.cron ?? '', timeZone: row.time_zone, after: new Date(Math.max(now.getTime(), due.getTime())) }) : null;
    const previous = await this.#previous(row.id, payload.dueAt);
    // enqueue: at most one fire waits behind the running one; skip: none does.
    const overlaps = row.overlap === 'skip' ? previous !== 'idle' : previous === 'waiting';
    const outcome = missed && row.missed === 'skip' ? 'skipped_missed' : overlaps ? 'skipped_overlap' : 'starting';
    const claimed = await this.#db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('schedules')
        .set({ next_fire_at: next?.toISOString() ?? null, status: next === null ? 'done' : 'active' })
        .where('id', '=', row.id)
        .where('status', '=', 'active')
        .where('next_fire_at', '=', payload.dueAt)
        .where('generation', '=', row.generation)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await trx.insertInto('schedule_fires').values({ schedule_id: row.id, due_at: payload.dueAt, at: now.toISOString(), outcome, turn_id: null, error: null }).execute();
      return true;
    });
    if (!claimed) return;
    if (next !== null) await this.#queueFire({ id: row.id, status: 'active', next_fire_at: next.toISOString(), generation: row.generation });
    if (outcome !== 'starting') return;
    // overlap "enqueue": this fire waits for the earlier ones to end, then starts.
    while (row.overlap === 'enqueue' && !this.#stopping.signal.aborted && (await this.#previous(row.id, payload.dueAt)) !== 'idle') {
      // A waiting fire says it is alive, so a fire whose process died waiting stops blocking the ones after it.
      await this.#db.updateTable('schedule_fires').set({ at: this.#clock.now().toISOString() }).where('schedule_id', '=', row.id).where('due_at', '=', payload.dueAt).execute();
      await pause(OVERLAP_POLL_MS, this.#stopping.signal);
    }
    await this.#startFireTurn(row, payload.dueAt);
  }

  async #startFireTurn(row: ScheduleTables['schedules'], dueAt: string): Promise<void> {
    const fire = this.#db.updateTable('schedule_fires').where('schedule_id', '=', row.id).where('due_at', '=', dueAt);
    try {
      const turns = this.#turns;
      if (turns === undefined) throw new Error('the schedule service was not started');
      const request = workRequestSchema.parse(JSON.parse(row.request_json));
      const run = await turns.startTurn({
        agent: request.agent,
        kind: 'text',
        input: row.prompt,
        model: request.model,
        ...(request.webhook === undefined ? {} : { webhook: request.webhook }),
        origin: { scheduleId: row.id },
      });
      await fire.set({ outcome: 'started', turn_id: run.id }).execute();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (!(error instanceof ServiceError)) this.#logger.error({ err: error, scheduleId: row.id }, 'a schedule fire could not start its turn');
      await fire.set({ outcome: 'failed', error: message.slice(0, 2_000) }).execute();
    }
  }

  /** Whether an earlier fire of the schedule still runs its turn, or waits to start one. */
  async #previous(scheduleId: string, beforeDueAt: string): Promise<'idle' | 'running' | 'waiting'> {
    const fires = await this.#db
      .selectFrom('schedule_fires')
      .select(['outcome', 'turn_id', 'at'])
      .where('schedule_id', '=', scheduleId)
      .where('due_at', '<', beforeDueAt)
      .where('outcome', 'in', ['starting', 'started'])
      .orderBy('due_at', 'desc')
      .limit(5)
      .execute();
    for (const fire of fires) {
      // Starting a turn takes moments: one "starting" for long was left by a process that died.
      if (fire.outcome === 'starting' && new Date(fire.at).getTime() > this.#clock.now().getTime() - STARTING_STALE_MS) return 'waiting';
      // Not ended yet (running, or waiting behind the agent's other turns).
      if (fire.turn_id !== null && (await this.#store.getTurn(fire.turn_id))?.finishedAt === null) return 'running';
    }
    return 'idle';
  }
}
