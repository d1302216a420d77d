import { fromKysely, PgBoss, type JobWithMetadata } from 'pg-boss';
import type { Logger } from 'pino';
import { pause } from '../concurrency/wait.js';
import type { JsonObject } from '../json.js';
import type { DurableHandler, DurableQueueOptions, DurableWork, EnqueueOptions, JobTransaction } from './durable-work.js';
import { hasPgBoss10Schema, movePgBoss10Jobs } from './pg-boss-10-jobs.js';
import { QueueWakers } from './queue-wakers.js';

/** How often an idle poller fetches when no local enqueue woke it. */
const POLL_MS = 500;
const STOP_GRACE_MS = 5_000;
/** pg-boss's shortest job heartbeat. */
const MIN_HEARTBEAT_SECONDS = 10;
/** pg-boss bounds one run of a handler by an expiry, at most a day: the leases are what matter. */
const MAX_RUN_SECONDS = 24 * 3_600;

/**
 * Durable work on PostgreSQL through pg-boss: every replica's workers fetch from the same
 * tables with `SKIP LOCKED`, so a job goes to exactly one worker at a time. The lease is
 * pg-boss's job heartbeat: the worker touches the job every third of it while the handler
 * runs, and a job whose heartbeat stops (its replica died) is failed by pg-boss's supervisor
 * on any live replica and retried, which is how a dead replica's work is taken over.
 */
export class PgBossDurableWork implements DurableWork {
  readonly #boss: PgBoss;
  readonly #logger: Logger;
  readonly #connectionString: string;
  /** The pg-boss 10 schema whose waiting jobs each queue takes over when defined; undefined when there is none. */
  readonly #legacySchema: string | undefined;
  readonly #wakers = new QueueWakers();
  readonly #loops: Promise<void>[] = [];
  readonly #stopping = new AbortController();
  /** Ends the heartbeats of handlers still running when `stop` gives up on them. */
  readonly #abandon = new AbortController();
  readonly #heartbeatSeconds: number;
  readonly #retentionDays: number;

  private constructor(options: { boss: PgBoss; logger: Logger; connectionString: string; legacySchema: string | undefined; leaseSeconds: number; retentionDays: number }) {
    this.#boss = options.boss;
    this.#heartbeatSeconds = Math.max(MIN_HEARTBEAT_SECONDS, options.leaseSeconds);
    this.#retentionDays = options.retentionDays;
    this.#logger = options.logger;
    this.#connectionString = options.connectionString;
    this.#legacySchema = options.legacySchema;
  }

  /**
   * Starts pg-boss in its own schema (it creates and migrates its tables there).
   * `superviseSeconds` is how often a replica looks for jobs whose lease ran out;
   * `leaseSeconds` how long a job's heartbeat may lapse (at least pg-boss's 10).
   * `legacySchema` is where pg-boss 10 kept its tables: when it holds a pg-boss 10 install,
   * each queue's waiting jobs are moved from there as the queue is defined.
   */
  static async open(options: {
    readonly connectionString: string;
    readonly schema: string;
    readonly legacySchema?: string;
    readonly superviseSeconds: number;
    readonly leaseSeconds: number;
    /** Days a finished job is kept (pg-boss's `deleteAfterSeconds`); 0 keeps them all. */
    readonly retentionDays: number;
    readonly logger: Logger;
  }): Promise<PgBossDurableWork> {
    const { logger } = options;
    const boss = new PgBoss({
      connectionString: options.connectionString,
      schema: options.schema,
      max: 4,
      schedule: false,
      supervise: true,
      // Expiry (a lost lease given to another worker) runs in the supervise pass, and each
      // queue is examined at most once per monitor interval: both are the lease check's period.
      superviseIntervalSeconds: options.superviseSeconds,
      monitorIntervalSeconds: options.superviseSeconds,
      instanceName: 'turn-runtime',
      // The service traces turns itself; pg-boss's spans would go to the global provider, which it leaves unset.
      openTelemetry: { enabled: false },
    });
    boss.on('error', (error: Error) => {
      logger.warn({ err: error }, 'pg-boss reported an error');
    });
    boss.on('warning', (warning: unknown) => {
      logger.warn({ warning }, 'pg-boss warned');
    });
    await boss.start();
    const legacySchema =
      options.legacySchema !== undefined && (await hasPgBoss10Schema({ connectionString: options.connectionString, schema: options.legacySchema })) ? options.legacySchema : undefined;
    if (legacySchema !== undefined) {
      logger.info(
        { legacySchema, schema: options.schema },
        `pg-boss 10's schema ${legacySchema} found: each queue's waiting jobs move into ${options.schema} as the queue starts; drop ${legacySchema} once no older replica runs`,
      );
    }
    return new PgBossDurableWork({ boss, logger, connectionString: options.connectionString, legacySchema, leaseSeconds: options.leaseSeconds, retentionDays: options.retentionDays });
  }

  /**
   * Creates the queue, or brings an existing one's retry and lease settings up to date (its
   * policy cannot change: pg-boss refuses, and so does this, saying which it has), then takes
   * over what pg-boss 10 left waiting in it.
   */
  async defineQueue(queue: DurableQueueOptions): Promise<void> {
    const settings = {
      retryLimit: queue.retryLimit,
      retryDelay: queue.retryDelaySeconds,
      retryBackoff: queue.backoff,
      heartbeatSeconds: this.#heartbeatSeconds,
      expireInSeconds: MAX_RUN_SECONDS,
      // pg-boss's maintenance deletes finished jobs this long after they ended (0: never).
      deleteAfterSeconds: this.#retentionDays * 86_400,
    };
    // createQueue does nothing when the queue exists (another replica may have made it just now).
    const existing = await this.#boss.getQueue(queue.name);
    if (existing === null) await this.#boss.createQueue(queue.name, { policy: queue.policy, ...settings });
    const policy = existing?.policy ?? (await this.#boss.getQueue(queue.name))?.policy;
    if (policy !== queue.policy) throw new Error(`the durable queue ${queue.name} has the policy ${String(policy)}, not ${queue.policy}; a queue's policy cannot change`);
    await this.#boss.updateQueue(queue.name, settings);
    if (this.#legacySchema !== undefined) {
      const moved = await movePgBoss10Jobs({ connectionString: this.#connectionString, legacySchema: this.#legacySchema, queue: queue.name, boss: this.#boss });
      if (moved > 0) this.#logger.info({ queue: queue.name, moved, legacySchema: this.#legacySchema }, `moved ${String(moved)} waiting jobs of ${queue.name} from pg-boss 10's schema`);
    }
  }

  /** pg-boss deletes finished jobs itself, by each queue's `deleteAfterSeconds` (see defineQueue). */
  pruneFinished(): Promise<number> {
    return Promise.resolve(0);
  }

  async enqueue(options: EnqueueOptions, within?: JobTransaction): Promise<string | null> {
    const id = await this.#boss.send(options.queue, options.payload, {
      ...(options.runAt === undefined ? {} : { startAfter: options.runAt }),
      ...(options.singletonKey === undefined ? {} : { singletonKey: options.singletonKey }),
      // pg-boss's insert runs on the caller's transaction (its tables are in the same database).
      ...(within === undefined ? {} : { db: fromKysely(within) }),
    });
    // Local workers take it now instead of at their next poll; other replicas poll. In a
    // caller's transaction, the caller wakes the queue once it has committed.
    if (id !== null && within === undefined) this.wake(options.queue);
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
      let jobs: JobWithMetadata<JsonObject>[] = [];
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
          this.wake(queue);
        });
        running.add(run);
      }
      if (jobs.length === 0 || running.size >= concurrency) await this.#idle(queue, signal);
    }
    await Promise.race([Promise.all(running), pause(STOP_GRACE_MS)]);
  }

  async #run(queue: string, handler: DurableHandler, job: JobWithMetadata<JsonObject>): Promise<void> {
    const attempt = { id: job.id, retryCount: job.retryCount };
    // Touching names the attempt too: a job taken over meanwhile is left to its new worker.
    const heartbeat = setInterval(() => {
      this.#boss.touch(queue, attempt).catch((error: unknown) => {
        this.#logger.warn({ err: error, queue, jobId: job.id }, 'could not renew the lease of a durable job');
      });
    }, (this.#heartbeatSeconds * 1000) / 3);
    const stopHeartbeat = () => {
      clearInterval(heartbeat);
    };
    this.#abandon.signal.addEventListener('abort', stopHeartbeat, { once: true });
    try {
      await handler({ id: job.id, queue, payload: job.data, attempt: job.retryCount + 1 });
      // Naming the attempt: when this one's lease ran out and another worker took the job
      // over, settling it here must not end that other attempt.
      await this.#boss.complete(queue, attempt);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await this.#boss.fail(queue, attempt, { message }).catch((failError: unknown) => {
        this.#logger.warn({ err: failError, queue, jobId: job.id }, 'could not record a failed durable job');
      });
    } finally {
      stopHeartbeat();
      this.#abandon.signal.removeEventListener('abort', stopHeartbeat);
    }
  }

  #idle(queue: string, signal: AbortSignal): Promise<void> {
    return this.#wakers.idle(queue, POLL_MS, signal);
  }

  wake(queue: string): void {
    this.#wakers.wake(queue);
  }

  async stop(): Promise<void> {
    this.#stopping.abort();
    await Promise.all(this.#loops);
    // A handler still running is given up on: its heartbeat stops and another replica takes the job.
    this.#abandon.abort();
    try {
      await this.#boss.stop({ graceful: true, timeout: 5_000 });
    } catch (error) {
      this.#logger.warn({ err: error }, 'pg-boss did not stop cleanly');
    }
  }
}

