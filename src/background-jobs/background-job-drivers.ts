import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { DurableWork } from '../durable/durable-work.js';
import type { TurnStore } from '../store/turn-store.js';
import type { TurnRun } from '../turns/turn-run.js';
import type { BackgroundJobTables } from './background-job-tables.js';
import { driveBackgroundJob, type JobFinishOutcome, type JobTurnStarter } from './drive-background-job.js';
import { runEvery } from '../concurrency/run-every.js';
import { WAKE_QUEUE, wakeJob } from './wake-job.js';

const HEARTBEAT_MS = 5_000;
/** A job whose owner has not said it is alive for this long is taken over by another process. */
const STALE_AFTER_MS = 20_000;
const SWEEP_MS = 10_000;

/**
 * The jobs this process drives: each woken through durable work so exactly one worker of any
 * replica claims it, driven by the process that claimed it (which says so every few seconds),
 * and taken over by another when that one goes quiet.
 */
export class BackgroundJobDrivers {
  readonly #db: Kysely<BackgroundJobTables>;
  readonly #durable: DurableWork;
  readonly #store: TurnStore;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #instanceId: string;
  readonly #soleProcess: boolean;
  readonly #finish: (jobId: string, outcome: JobFinishOutcome) => Promise<boolean>;
  readonly #driving = new Map<string, { promise: Promise<void>; run: TurnRun | undefined }>();
  readonly #stopping = new AbortController();
  readonly #timers: NodeJS.Timeout[] = [];
  #turns: JobTurnStarter | undefined;

  constructor(options: {
    readonly db: Kysely<BackgroundJobTables>;
    readonly durable: DurableWork;
    readonly store: TurnStore;
    readonly clock: Clock;
    readonly logger: Logger;
    readonly instanceId: string;
    /** The only process on the store (SQLite): the jobs any earlier driver held are its previous life's. */
    readonly soleProcess: boolean;
    /** Ends the job as its driver says (see `JobDriverContext.finish`). */
    readonly finish: (jobId: string, outcome: JobFinishOutcome) => Promise<boolean>;
  }) {
    this.#db = options.db;
    this.#durable = options.durable;
    this.#store = options.store;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#instanceId = options.instanceId;
    this.#soleProcess = options.soleProcess;
    this.#finish = options.finish;
  }

  /** Starts driving jobs through `turns`: the ones this process's previous life left, then any that go stale. */
  async start(options: { readonly turns: JobTurnStarter }): Promise<void> {
    this.#turns = options.turns;
    await this.#durable.defineQueue({ name: WAKE_QUEUE, policy: 'stately', retryLimit: 5, retryDelaySeconds: 2, backoff: true });
    // Take back the jobs this process's previous life drove (on SQLite, whatever it was called).
    await this.#db
      .updateTable('background_jobs')
      .set({ owner: null })
      .where('status', '=', 'running')
      .$if(!this.#soleProcess, (query) => query.where('owner', '=', this.#instanceId))
      .execute();
    await this.#durable.work({ queue: WAKE_QUEUE, concurrency: 2, handler: (job) => this.#claim(typeof job.payload['jobId'] === 'string' ? job.payload['jobId'] : '') });
    await this.#sweep();
    this.#every(HEARTBEAT_MS, 'job heartbeat', () => this.#heartbeat());
    this.#every(SWEEP_MS, 'job sweep', () => this.#sweep());
  }

  /** Asks for the job to be claimed and driven (at most one wake waits per job). */
  async wake(jobId: string): Promise<void> {
    await this.#durable.enqueue(wakeJob(jobId));
  }

  /** Aborts the job's running turn when this process drives it (another replica's driver sees the stop itself). */
  cancelRunningTurn(jobId: string): void {
    this.#driving.get(jobId)?.run?.cancel('cancel_requested');
  }

  /** Stops driving: each driver leaves its job where it is (the next owner goes on with it). */
  async close(): Promise<void> {
    this.#stopping.abort();
    for (const timer of this.#timers) clearInterval(timer);
    await Promise.all([...this.#driving.values()].map((entry) => entry.promise));
  }

  /** Claims the job for this process unless a live one drives it, and drives it in the background. */
  async #claim(jobId: string): Promise<void> {
    const turns = this.#turns;
    if (turns === undefined || this.#stopping.signal.aborted || this.#driving.has(jobId)) return;
    const now = this.#clock.now();
    const result = await this.#db
      .updateTable('background_jobs')
      .set({ owner: this.#instanceId, heartbeat_at: now.toISOString() })
      .where('id', '=', jobId)
      .where('status', '=', 'running')
      .where((eb) => eb.or([eb('owner', 'is', null), eb('heartbeat_at', '<', new Date(now.getTime() - STALE_AFTER_MS).toISOString())]))
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return;
    const entry: { promise: Promise<void>; run: TurnRun | undefined } = { promise: Promise.resolve(), run: undefined };
    this.#driving.set(jobId, entry);
    entry.promise = driveBackgroundJob({
      jobId,
      db: this.#db,
      store: this.#store,
      turns,
      clock: this.#clock,
      logger: this.#logger.child({ jobId }),
      signal: this.#stopping.signal,
      finish: (outcome) => this.#finish(jobId, outcome),
      setRunning: (run) => {
        entry.run = run;
      },
    })
      .catch((error: unknown) => {
        this.#logger.error({ err: error, jobId }, 'a background job driver failed; another will take the job over');
      })
      .finally(async () => {
        this.#driving.delete(jobId);
        await this.#db.updateTable('background_jobs').set({ owner: null }).where('id', '=', jobId).where('owner', '=', this.#instanceId).execute().catch(() => undefined);
      });
  }

  async #heartbeat(): Promise<void> {
    const ids = [...this.#driving.keys()];
    if (ids.length === 0) return;
    await this.#db.updateTable('background_jobs').set({ heartbeat_at: this.#clock.now().toISOString() }).where('id', 'in', ids).where('owner', '=', this.#instanceId).execute();
  }

  /** Wakes every running job nobody drives (none yet, or its owner went quiet). */
  async #sweep(): Promise<void> {
    const staleBefore = new Date(this.#clock.now().getTime() - STALE_AFTER_MS).toISOString();
    const rows = await this.#db
      .selectFrom('background_jobs')
      .select('id')
      .where('status', '=', 'running')
      .where((eb) => eb.or([eb('owner', 'is', null), eb('heartbeat_at', '<', staleBefore)]))
      .limit(1_000)
      .execute();
    for (const row of rows) if (!this.#driving.has(row.id)) await this.wake(row.id);
  }

  #every(intervalMs: number, what: string, task: () => Promise<unknown>): void {
    this.#timers.push(runEvery({ intervalMs, what, task, logger: this.#logger }));
  }
}
