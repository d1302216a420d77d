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
  /**
   * How long a running job may go unfinished before it counts as lost (its replica died) and
   * is given to a worker again, as a failed attempt. Handlers that may outlive it must be
   * idempotent and detect that their first run is still alive.
   */
  readonly leaseSeconds: number;
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
 * one running it stops answering. Effects are exactly once because handlers are idempotent
 * (they check the stored state they change). PostgreSQL: pg-boss; SQLite: tables in the
 * store's file, run in-process.
 */
export interface DurableWork {
  /** Creates or updates a queue; call before `enqueue` or `work` on it. */
  defineQueue(queue: DurableQueueOptions): Promise<void>;
  /** Stores a job; resolves with its id, or null when a stately queue already has one waiting for the key. */
  enqueue(options: EnqueueOptions): Promise<string | null>;
  /** Starts `concurrency` workers on the queue in this process. */
  work(options: { readonly queue: string; readonly concurrency: number; readonly handler: DurableHandler }): Promise<void>;
  /** Stops taking jobs and waits for the running handlers (a few seconds at most). */
  stop(): Promise<void>;
}
