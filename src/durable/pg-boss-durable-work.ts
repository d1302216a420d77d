import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { JsonObject } from '../json.js';
import type { DurableHandler, DurableQueueOptions, DurableWork, EnqueueOptions } from './durable-work.js';

/** pg-boss refuses to poll faster than this. */
const POLLING_INTERVAL_SECONDS = 0.5;

/**
 * Durable work on PostgreSQL through pg-boss: every replica's workers fetch from the same
 * tables with `SKIP LOCKED`, so a job goes to exactly one worker at a time; a job whose
 * handler does not finish within the queue's lease is failed by pg-boss's supervisor (on any
 * live replica) and retried, which is how a dead replica's work is taken over.
 */
export class PgBossDurableWork implements DurableWork {
  readonly #boss: PgBoss;
  readonly #logger: Logger;
  readonly #workers = new Map<string, string[]>();

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
      pollingIntervalSeconds: POLLING_INTERVAL_SECONDS,
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
    if (id !== null) for (const worker of this.#workers.get(options.queue) ?? []) this.#boss.notifyWorker(worker);
    return id;
  }

  async work(options: { readonly queue: string; readonly concurrency: number; readonly handler: DurableHandler }): Promise<void> {
    const ids = this.#workers.get(options.queue) ?? [];
    this.#workers.set(options.queue, ids);
    for (let index = 0; index < options.concurrency; index += 1) {
      const id = await this.#boss.work<JsonObject>(
        options.queue,
        { batchSize: 1, includeMetadata: true, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS },
        async (jobs) => {
          for (const job of jobs) {
            await options.handler({ id: job.id, queue: options.queue, payload: job.data, attempt: job.retryCount + 1 });
          }
        },
      );
      ids.push(id);
    }
  }

  async stop(): Promise<void> {
    try {
      await this.#boss.stop({ graceful: true, wait: true, timeout: 5_000 });
    } catch (error) {
      this.#logger.warn({ err: error }, 'pg-boss did not stop cleanly');
    }
  }
}
