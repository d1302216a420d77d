import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { DurableWork } from './durable-work.js';

/** The queue of the periodic prune: stately with one key, so one job waits and one runs, whatever the replicas. */
export const RETENTION_QUEUE = 'retention-prune';

/** Rows one statement deletes at most: a prune never holds a long lock or a large transaction. */
export const PRUNE_BATCH = 500;

/** Batches one job deletes at most per part before it yields to the next job (which comes at once). */
const MAX_BATCHES_PER_JOB = 40;

const DAY_MS = 24 * 3_600_000;

/**
 * One part's kept history: deletes what finished before `before`, at most `limit` rows per
 * statement, and answers the rows its largest statement deleted (`limit` means there may be more).
 */
export interface Pruner {
  readonly name: string;
  prune(options: { readonly before: string; readonly limit: number }): Promise<number>;
}

/**
 * Prunes finished durable work older than `RETENTION_DAYS` with a periodic durable job: runs,
 * jobs and their events, fires, webhook attempts, finished queue jobs. Each pass deletes in
 * batches of `PRUNE_BATCH`; a pass with more left queues the next one at once, else the next one
 * `intervalMs` later. A crashed pass is retried by its queue; each replica asks for a pass at
 * start and the single key keeps it one. `days` 0 keeps everything (no queue, no job).
 */
export class Retention {
  readonly #durable: DurableWork;
  readonly #pruners: readonly Pruner[];
  readonly #days: number;
  readonly #intervalMs: number;
  readonly #clock: Clock;
  readonly #logger: Logger;

  constructor(options: { readonly durable: DurableWork; readonly pruners: readonly Pruner[]; readonly days: number; readonly intervalMs: number; readonly clock: Clock; readonly logger: Logger }) {
    this.#durable = options.durable;
    this.#pruners = options.pruners;
    this.#days = options.days;
    this.#intervalMs = options.intervalMs;
    this.#clock = options.clock;
    this.#logger = options.logger;
  }

  async start(): Promise<void> {
    if (this.#days === 0) return;
    await this.#durable.defineQueue({ name: RETENTION_QUEUE, policy: 'stately', retryLimit: 20, retryDelaySeconds: 60, backoff: true });
    await this.#durable.work({ queue: RETENTION_QUEUE, concurrency: 1, handler: () => this.#pass() });
    await this.#durable.enqueue({ queue: RETENTION_QUEUE, payload: {}, singletonKey: RETENTION_QUEUE });
  }

  /** Prunes up to the batch cap of each part; answers how many went, by part. Nothing with `days` 0. */
  async prune(): Promise<{ readonly deleted: Record<string, number>; readonly more: boolean }> {
    if (this.#days === 0) return { deleted: {}, more: false };
    const before = new Date(this.#clock.now().getTime() - this.#days * DAY_MS).toISOString();
    const deleted: Record<string, number> = {};
    let more = false;
    for (const pruner of this.#pruners) {
      let total = 0;
      for (let batch = 0; batch < MAX_BATCHES_PER_JOB; batch += 1) {
        const count = await pruner.prune({ before, limit: PRUNE_BATCH });
        total += count;
        if (count < PRUNE_BATCH) break;
        if (batch === MAX_BATCHES_PER_JOB - 1) more = true;
      }
      deleted[pruner.name] = total;
    }
    return { deleted, more };
  }

  async #pass(): Promise<void> {
    const { deleted, more } = await this.prune();
    if (Object.values(deleted).some((count) => count > 0)) this.#logger.info({ deleted, retentionDays: this.#days }, 'pruned finished work past its retention');
    // The next pass: at once while more is left, else after the interval. Queued while this one is
    // active (a stately queue keeps one waiting), so a crash from here on loses nothing: the
    // active job is retried or the queued one runs.
    const runAt = new Date(this.#clock.now().getTime() + (more ? 0 : this.#intervalMs));
    await this.#durable.enqueue({ queue: RETENTION_QUEUE, payload: {}, singletonKey: RETENTION_QUEUE, runAt });
  }
}
