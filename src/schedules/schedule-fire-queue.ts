import type { Logger } from 'pino';
import type { DurableWork } from '../durable/durable-work.js';
import type { ScheduleStore } from './schedule-store.js';
import type { ScheduleTables } from './schedule-tables.js';

const FIRE_QUEUE = 'schedule-fire';
const SWEEP_MS = 60_000;

/** A fire's durable job: the schedule, the due time it fires for, and the generation it was queued at. */
export interface FirePayload {
  readonly scheduleId: string;
  readonly dueAt: string;
  readonly generation: number;
}

/**
 * The durable queue of schedule fires: each fire is a job due at its time, taken by whichever
 * worker of whichever replica; a fire lost between claim and queue is found by a sweep.
 */
export class ScheduleFireQueue {
  readonly #durable: DurableWork;
  readonly #schedules: ScheduleStore;
  readonly #logger: Logger;
  readonly #timers: NodeJS.Timeout[] = [];

  constructor(options: { readonly durable: DurableWork; readonly schedules: ScheduleStore; readonly logger: Logger }) {
    this.#durable = options.durable;
    this.#schedules = options.schedules;
    this.#logger = options.logger;
  }

  /** Hands each fire to `handler`, queues the fires due, and sweeps again every minute. */
  async start(options: { readonly handler: (payload: FirePayload) => Promise<void> }): Promise<void> {
    await this.#durable.defineQueue({ name: FIRE_QUEUE, policy: 'stately', retryLimit: 3, retryDelaySeconds: 1, backoff: true });
    await this.#durable.work({ queue: FIRE_QUEUE, concurrency: 8, handler: (job) => options.handler(job.payload as unknown as FirePayload) });
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
    for (const timer of this.#timers) clearInterval(timer);
  }

  /** Queues the schedule's next fire, if it is active and has one (one job per generation and due time). */
  async queue(row: Pick<ScheduleTables['schedules'], 'id' | 'status' | 'next_fire_at' | 'generation'>): Promise<void> {
    if (row.status !== 'active' || row.next_fire_at === null) return;
    const payload: FirePayload = { scheduleId: row.id, dueAt: row.next_fire_at, generation: row.generation };
    await this.#durable.enqueue({ queue: FIRE_QUEUE, payload: { ...payload }, runAt: new Date(row.next_fire_at), singletonKey: `${row.id}:${payload.generation}:${payload.dueAt}` });
  }

  /** Queues the next fire of every active schedule (deduplicated): a fire lost between claim and queue is found here. */
  async #sweep(): Promise<void> {
    const rows = await this.#schedules.listActive();
    for (const row of rows) await this.queue(row);
  }
}
