import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { pause } from '../concurrency/wait.js';
import type { JsonObject } from '../json.js';
import type { DurableHandler, DurableQueueOptions, DurableWork, EnqueueOptions } from './durable-work.js';
import { QueueWakers } from './queue-wakers.js';

/** How often an idle poller fetches when no local enqueue woke it. */
const POLL_MS = 500;
const STOP_GRACE_MS = 5_000;

/**
 * Durable work on PostgreSQL through pg-boss: every replica's workers fetch from the same
 * tables with `SKIP LOCKED`, so a job goes to exactly one worker at a time; a job whose
 * handler does not finish within the queue's lease is failed by pg-boss's supervisor (on any
 * live replica) and retried, which is how a dead replica's work is taken over.
 */
export class PgBossDurableWork implements DurableWork {
  readonly #boss: PgBoss;
  readonly #logger: Logger;
  readonly #wakers = new QueueWakers();
  readonly #loops: Promise<void>[] = [];
  readonly #stopping = new AbortController();

  private constructor(boss: PgBoss, logger: Logger) {
    this.#boss = boss;
    this.#logger = logger;
  }

  /**
   * Starts pg-boss in its own schema (it creates and migrates its tables there).
   * `superviseSeconds` is how often a replica looks for jobs whose lease ran out.
   */
  static async open(options: {
    readonly connectionString: string;
    readonly schema: string;
    readonly superviseSeconds: number;
    readonly logger: Logger;
  }): Promise<PgBossDurableWork> {
    const boss = new PgBoss({
      connectionString: options.connectionString,
      schema: options.schema,
      max: 4,
      schedule: false,
      supervise: true,
      maintenanceIntervalSeconds: options.superviseSeconds,
    });
    boss.on('error', (error: Error) => {
      options.logger.warn({ err: error }, 'pg-boss reported an error');
    });
    await boss.start();
    return new PgBossDurableWork(boss, options.logger);
  }

  async defineQueue(queue: DurableQueueOptions): Promise<void> {
    const settings = {
      policy: queue.policy,
      retryLimit: queue.retryLimit,
      retryDelay: queue.retryDelaySeconds,
      retryBackoff: queue.backoff,
      expireInSeconds: queue.leaseSeconds,
    };
    if ((await this.#boss.getQueue(queue.name)) === null) {
      try {
        await this.#boss.createQueue(queue.name, { name: queue.name, ...settings });
        return;
      } catch (error) {
        // Another replica created it meanwhile: update it instead.
        if ((await this.#boss.getQueue(queue.name)) === null) throw error;
      }
    }
    await this.#boss.updateQueue(queue.name, { name: queue.name, ...settings });
  }

  async enqueue(options: EnqueueOptions): Promise<string | null> {
    const id = await this.#boss.send(options.queue, options.payload, {
      ...(options.runAt === undefined ? {} : { startAfter: options.runAt }),
      ...(options.singletonKey === undefined ? {} : { singletonKey: options.singletonKey }),
    });
    // Local workers take it now instead of at their next poll; other replicas poll.
    if (id !== null) this.#wake(options.queue);
    return id;
  }

  /**
   * One poller per queue and process: fetches as many jobs as there are free handler slots
   * (pg-boss hands each to exactly one fetcher), runs them in the background and completes or
   * fails each (pg-boss schedules the retry). Woken early by local enqueues.
   */
  work(options: { readonly queue: string; readonly concurrency: number; readonly handler: DurableHandler }): Promise<void> {
    this.#loops.push(this.#loop(options.queue, options.concurrency, options.handler));
    return Promise.resolve();
  }

  async #loop(queue: string, concurrency: number, handler: DurableHandler): Promise<void> {
    const signal = this.#stopping.signal;
    const running = new Set<Promise<void>>();
    while (!signal.aborted) {
      const free = concurrency - running.size;
      let jobs: PgBoss.JobWithMetadata<JsonObject>[] = [];
      if (free > 0) {
        try {
          jobs = await this.#boss.fetch<JsonObject>(queue, { batchSize: free, includeMetadata: true });
        } catch (error) {
          this.#logger.warn({ err: error, queue }, 'could not fetch durable jobs');
        }
      }
      for (const job of jobs) {
        const run = this.#run(queue, handler, job).finally(() => {
          running.delete(run);
          this.#wake(queue);
        });
        running.add(run);
      }
      if (jobs.length === 0 || running.size >= concurrency) await this.#idle(queue, signal);
    }
    await Promise.race([Promise.all(running), pause(STOP_GRACE_MS)]);
  }

  async #run(queue: string, handler: DurableHandler, job: PgBoss.JobWithMetadata<JsonObject>): Promise<void> {
    try {
      await handler({ id: job.id, queue, payload: job.data, attempt: job.retryCount + 1 });
      await this.#boss.complete(queue, job.id);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await this.#boss.fail(queue, job.id, { message }).catch((failError: unknown) => {
        this.#logger.warn({ err: failError, queue, jobId: job.id }, 'could not record a failed durable job');
      });
    }
  }

  #idle(queue: string, signal: AbortSignal): Promise<void> {
    return this.#wakers.idle(queue, POLL_MS, signal);
  }

  #wake(queue: string): void {
    this.#wakers.wake(queue);
  }

  async stop(): Promise<void> {
    this.#stopping.abort();
    await Promise.all(this.#loops);
    try {
      await this.#boss.stop({ graceful: true, wait: true, timeout: 5_000 });
    } catch (error) {
      this.#logger.warn({ err: error }, 'pg-boss did not stop cleanly');
    }
  }
}
