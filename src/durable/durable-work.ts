import type { CompiledQuery, QueryResult } from 'kysely';
import type { JsonObject } from '../json.js';

/**
 * How a queue treats its jobs. `standard`: every enqueued job runs. `stately`: per
 * singleton key, at most one job waits and one runs (an enqueue while one already waits is
 * dropped), so a "wake up run X" job can be sent as often as needed and runs at most once
 * at a time.
 */
export type DurableQueuePolicy = 'standard' | 'stately';

export interface DurableQueueOptions {
  readonly name: string;
  readonly policy: DurableQueuePolicy;
  /** Attempts after the first; then the job fails for good. */
  readonly retryLimit: number;
  /** Seconds before a retry; doubled per attempt when `backoff` is set. */
  readonly retryDelaySeconds: number;
  readonly backoff: boolean;
}

export interface EnqueueOptions {
  readonly queue: string;
  readonly payload: JsonObject;
  /** Not before this time. */
  readonly runAt?: Date;
  /** On a `stately` queue: at most one waiting job per key. */
  readonly singletonKey?: string;
}

/**
 * An open transaction on the store's database (a Kysely transaction): a job enqueued in it is
 * stored, and can run, only if that transaction commits. This is how a state change and the
 * work it calls for are written together (a transactional outbox) instead of one after the other.
 */
export interface JobTransaction {
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
}

/** A job as its handler sees it. */
export interface DurableJob {
  readonly id: string;
  readonly queue: string;
  readonly payload: JsonObject;
  /** 1 for the first delivery, then 2, 3 … (retries and lease takeovers). */
  readonly attempt: number;
}

/** Handles one job; throwing schedules a retry (with backoff) until the retry limit. */
export type DurableHandler = (job: DurableJob) => Promise<void>;

/**
 * Work that outlives a turn: named jobs with a JSON payload, stored, delivered at least once
 * to one worker of any replica, retried with backoff, and given to another worker when the
 * one running it stops answering. A running job holds a short lease (DURABLE_LEASE_SECONDS)
 * that its worker renews while the handler runs, so a handler may run as long as it needs and
 * a dead replica's jobs go to another worker within a lease and a supervise pass, whatever the
 * replacement is called. Effects are exactly once because handlers are idempotent
 * (they check the stored state they change). PostgreSQL: pg-boss; SQLite: tables in the
 * store's file, run in-process.
 */
export interface DurableWork {
  /** Creates or updates a queue; call before `enqueue` or `work` on it. */
  defineQueue(queue: DurableQueueOptions): Promise<void>;
  /**
   * Stores a job; resolves with its id, or null when a stately queue already has one waiting
   * for the key. With `within`, the job is written in that store transaction: call `wake` for
   * its queue once the transaction has committed, so this process's workers take it at once.
   */
  enqueue(options: EnqueueOptions, within?: JobTransaction): Promise<string | null>;
  /** Wakes this process's idle workers on the queue (other replicas find the job at their next poll). */
  wake(queue: string): void;
  /** Starts `concurrency` workers on the queue in this process. */
  work(options: { readonly queue: string; readonly concurrency: number; readonly handler: DurableHandler }): Promise<void>;
  /**
   * Forgets up to `limit` jobs that completed or failed before `before` (ISO 8601); answers how
   * many. On PostgreSQL pg-boss prunes its own by each queue's `deleteAfterSeconds` (from
   * `RETENTION_DAYS`), so this deletes nothing there.
   */
  pruneFinished(options: { readonly before: string; readonly limit: number }): Promise<number>;
  /** Stops taking jobs and waits for the running handlers (a few seconds at most). */
  stop(): Promise<void>;
}
