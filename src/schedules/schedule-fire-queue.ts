import type { Logger } from 'pino';
import type { DurableWork } from '../durable/durable-work.js';
import { FIRE_QUEUE, FIRE_START_QUEUE, fireJob, type FirePayload, type FireStartPayload } from './schedule-jobs.js';
import type { ScheduleStore } from './schedule-store.js';

const SWEEP_MS = 60_000;

/**
 * The durable queues of schedule fires: each fire is a job due at its time, taken by whichever
 * worker of whichever replica, and a claimed fire's turn is started by a job of its own. Each is
 * written with the change that calls for it; a sweep queues the next fire of every active
 * schedule once a minute all the same (deduplicated), for schedules stored before that was so.
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

  /** Hands each fire to `fire` and each claimed fire's start to `start`, queues the fires due, and sweeps again every minute. */
  async start(options: { readonly fire: (payload: FirePayload) => Promise<void>; readonly start: (payload: FireStartPayload) => Promise<void> }): Promise<void> {
    await this.#durable.defineQueue({ name: FIRE_QUEUE, policy: 'stately', retryLimit: 3, retryDelaySeconds: 1, backoff: true });
    await this.#durable.defineQueue({ name: FIRE_START_QUEUE, policy: 'standard', retryLimit: 10, retryDelaySeconds: 1, backoff: true });
    await this.#durable.work({ queue: FIRE_QUEUE, concurrency: 4, handler: (job) => options.fire(job.payload as unknown as FirePayload) });
    await this.#durable.work({ queue: FIRE_START_QUEUE, concurrency: 4, handler: (job) => options.start(job.payload as unknown as FireStartPayload) });
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

  async #sweep(): Promise<void> {
    const rows = await this.#schedules.listActive();
    for (const row of rows) {
      const job = fireJob(row);
      if (job !== undefined) await this.#durable.enqueue(job);
    }
  }
}
