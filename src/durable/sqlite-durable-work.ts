import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { pause } from '../concurrency/wait.js';
import type { JsonObject } from '../json.js';
import type { DurableJobsDatabase } from './durable-jobs-table.js';
import type { DurableHandler, DurableJob, DurableQueueOptions, DurableWork, EnqueueOptions, JobTransaction } from './durable-work.js';
import { retryDelaySeconds } from './retry-delay.js';
import { QueueWakers } from './queue-wakers.js';

/** How often an idle worker looks for due jobs it was not woken for (delayed jobs, expired leases). */
const IDLE_POLL_MS = 250;
const STOP_GRACE_MS = 5_000;

/**
 * Durable work over a table in the store's SQLite file, run in this process. One process owns
 * the file, so jobs left `active` by its previous life are handed out again at start (as a new
 * attempt). A job whose lease runs out while its handler still runs is handed out again too:
 * the same at-least-once contract as pg-boss.
 */
export class SqliteDurableWork implements DurableWork {
  readonly #db: Kysely<DurableJobsDatabase>;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #queues = new Map<string, DurableQueueOptions>();
  readonly #wakers = new QueueWakers();
  readonly #stopping = new AbortController();
  readonly #loops: Promise<void>[] = [];
  readonly #instanceId: string;
  readonly #leaseSeconds: number;
  /** Ends the lease renewals of handlers still running when `stop` gives up on them. */
  readonly #abandon = new AbortController();

  private constructor(options: { db: Kysely<DurableJobsDatabase>; leaseSeconds: number; clock: Clock; logger: Logger }) {
    this.#db = options.db;
    this.#leaseSeconds = options.leaseSeconds;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#instanceId = randomUUID();
  }

  /**
   * Opens the runner; jobs its previous life left running become due at once. A running job's
   * lease lasts `leaseSeconds` and is renewed every third of that while its handler runs.
   */
  static async open(options: { readonly db: Kysely<DurableJobsDatabase>; readonly leaseSeconds: number; readonly clock: Clock; readonly logger: Logger }): Promise<SqliteDurableWork> {
    const work = new SqliteDurableWork(options);
    const now = options.clock.now();
    await options.db.updateTable('durable_jobs').set({ lease_until: now.toISOString() }).where('state', '=', 'active').execute();
    return work;
  }

  /** Forgets up to `limit` jobs that completed or failed before `before` (ISO 8601); answers how many. pg-boss prunes its own (`deleteAfterSeconds`). */
  async pruneFinished(options: { readonly before: string; readonly limit: number }): Promise<number> {
    const deleted = await this.#db
      .deleteFrom('durable_jobs')
      .where('id', 'in', (eb) => eb.selectFrom('durable_jobs as done').select('done.id').where('done.state', 'in', ['completed', 'failed']).where('done.finished_at', '<', options.before).limit(options.limit))
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }

  defineQueue(queue: DurableQueueOptions): Promise<void> {
    this.#queues.set(queue.name, queue);
    return Promise.resolve();
  }

  async enqueue(options: EnqueueOptions, within?: JobTransaction): Promise<string | null> {
    const queue = this.#queue(options.queue);
    const id = randomUUID();
    const now = this.#clock.now().toISOString();
    const runAt = options.runAt?.toISOString() ?? now;
    const key = options.singletonKey ?? null;
    const payload = JSON.stringify(options.payload);
    // One statement: on a stately queue, insert unless one already waits for the key.
    const insert = sql`insert into durable_jobs (id, queue, payload_json, state, singleton_key, run_at, attempt, created_at)
      select ${id}, ${queue.name}, ${payload}, 'queued', ${key}, ${runAt}, 0, ${now}
      where ${queue.policy === 'stately' && key !== null ? 1 : 0} = 0
        or not exists (select 1 from durable_jobs where queue = ${queue.name} and singleton_key = ${key} and state = 'queued')`.compile(this.#db);
    const result = await (within ?? this.#db).executeQuery(insert);
    if (result.numAffectedRows === 0n) return null;
    // In a caller's transaction, the caller wakes the queue once it has committed.
    if (within === undefined) this.wake(queue.name);
    return id;
  }

  work(options: { readonly queue: string; readonly concurrency: number; readonly handler: DurableHandler }): Promise<void> {
    const queue = this.#queue(options.queue);
    this.#loops.push(this.#loop(queue, options.handler, options.concurrency, `${this.#instanceId}:${queue.name}`));
    return Promise.resolve();
  }

  /** Waits for running handlers up to a grace period; a job still running then is handed out again at the next start. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    this.#wakers.wakeAll();
    await Promise.race([Promise.all(this.#loops), pause(STOP_GRACE_MS)]);
    // A handler still running is given up on: its job goes to the next start, or another runner.
    this.#abandon.abort();
  }

  #queue(name: string): DurableQueueOptions {
    const queue = this.#queues.get(name);
    if (queue === undefined) throw new Error(`durable queue "${name}" is not defined`);
    return queue;
  }

  wake(queue: string): void {
    this.#wakers.wake(queue);
  }

  /** One poller per queue: claims due jobs while fewer than `concurrency` handlers run, and runs each in the background. */
  async #loop(queue: DurableQueueOptions, handler: DurableHandler, concurrency: number, worker: string): Promise<void> {
    const signal = this.#stopping.signal;
    const running = new Set<Promise<void>>();
    while (!signal.aborted) {
      let job: DurableJob | undefined;
      // Each claim has its own lock token: after a lease takeover, only the new holder may close the job.
      const token = `${worker}:${randomUUID()}`;
      if (running.size < concurrency) {
        try {
          job = await this.#claim(queue, token);
        } catch (error) {
          this.#logger.warn({ err: error, queue: queue.name }, 'could not claim a durable job');
        }
      }
      if (job === undefined) {
        await this.#idle(queue.name, signal);
        continue;
      }
      const run = this.#run(queue, handler, job, token).finally(() => {
        running.delete(run);
        this.wake(queue.name);
      });
      running.add(run);
    }
    await Promise.all(running);
  }

  #idle(queue: string, signal: AbortSignal): Promise<void> {
    return this.#wakers.idle(queue, IDLE_POLL_MS, signal);
  }

  async #claim(queue: DurableQueueOptions, worker: string): Promise<DurableJob | undefined> {
    const now = this.#clock.now();
    const nowText = now.toISOString();
    const leaseUntil = new Date(now.getTime() + this.#leaseSeconds * 1000).toISOString();
    // Due jobs, and active ones whose lease ran out; on a stately queue never a second running job of a key.
    const { rows } = await sql<{ id: string; payload_json: string; attempt: number }>`
      update durable_jobs set state = 'active', attempt = attempt + 1, locked_by = ${worker}, lease_until = ${leaseUntil}
      where id = (
        select job.id from durable_jobs job
        where job.queue = ${queue.name}
          and ((job.state = 'queued' and job.run_at <= ${nowText}) or (job.state = 'active' and job.lease_until <= ${nowText}))
          and (${queue.policy} <> 'stately' or job.singleton_key is null or job.state = 'active' or not exists (
            select 1 from durable_jobs other
            where other.queue = job.queue and other.singleton_key = job.singleton_key and other.state = 'active' and other.lease_until > ${nowText}))
        order by job.run_at limit 1)
      returning id, payload_json, attempt`.execute(this.#db);
    const [row] = rows;
    if (row === undefined) return undefined;
    if (row.attempt > queue.retryLimit + 1) {
      await this.#finish(row.id, worker, { state: 'failed', error: 'its lease ran out on every attempt' });
      return this.#claim(queue, worker);
    }
    return { id: row.id, queue: queue.name, payload: JSON.parse(row.payload_json) as JsonObject, attempt: row.attempt };
  }

  async #run(queue: DurableQueueOptions, handler: DurableHandler, job: DurableJob, worker: string): Promise<void> {
    const renewal = setInterval(() => {
      this.#renew(job, worker).catch((error: unknown) => {
        this.#logger.warn({ err: error, queue: queue.name, jobId: job.id }, 'could not renew the lease of a durable job');
      });
    }, (this.#leaseSeconds * 1000) / 3);
    const stopRenewing = () => {
      clearInterval(renewal);
    };
    this.#abandon.signal.addEventListener('abort', stopRenewing, { once: true });
    try {
      await handler(job);
      await this.#finish(job.id, worker, { state: 'completed' });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (job.attempt > queue.retryLimit) {
        this.#logger.warn({ err: error, queue: queue.name, jobId: job.id }, 'a durable job failed for good');
        await this.#finish(job.id, worker, { state: 'failed', error: message }).catch(() => undefined);
        return;
      }
      const runAt = new Date(this.#clock.now().getTime() + retryDelaySeconds({ queue, attempt: job.attempt }) * 1000).toISOString();
      await this.#db
        .updateTable('durable_jobs')
        .set({ state: 'queued', run_at: runAt, locked_by: null, lease_until: null, last_error: message })
        .where('id', '=', job.id)
        .where('locked_by', '=', worker)
        .where('state', '=', 'active')
        .execute()
        .catch((storeError: unknown) => {
          this.#logger.error({ err: storeError, jobId: job.id }, 'could not schedule the retry of a durable job');
        });
    } finally {
      stopRenewing();
      this.#abandon.signal.removeEventListener('abort', stopRenewing);
    }
  }

  /** Extends the lease of a job this worker still holds; after a takeover the job is someone else's. */
  async #renew(job: DurableJob, worker: string): Promise<void> {
    const result = await this.#db
      .updateTable('durable_jobs')
      .set({ lease_until: new Date(this.#clock.now().getTime() + this.#leaseSeconds * 1000).toISOString() })
      .where('id', '=', job.id)
      .where('locked_by', '=', worker)
      .where('state', '=', 'active')
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) this.#logger.warn({ queue: job.queue, jobId: job.id }, 'a durable job was taken over while its handler still ran');
  }

  async #finish(id: string, worker: string, outcome: { state: 'completed' | 'failed'; error?: string }): Promise<void> {
    // Only the worker that holds the job may close it: after a lease takeover the job is someone else's.
    await this.#db
      .updateTable('durable_jobs')
      .set({ state: outcome.state, finished_at: this.#clock.now().toISOString(), lease_until: null, last_error: outcome.error ?? null })
      .where('id', '=', id)
      .where('locked_by', '=', worker)
      .where('state', '=', 'active')
      .execute();
  }
}
