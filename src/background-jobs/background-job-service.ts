import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { crashPoint } from '../durable/crash-points.js';
import type { Creation, CreationKey } from '../durable/creation-keys.js';
import type { DurableWork } from '../durable/durable-work.js';
import type { WorkRequest } from '../turns/work-request.js';
import { ServiceError } from '../service-error.js';
import type { TurnStore } from '../store/turn-store.js';
import { checkWebhookUrl } from '../webhooks/check-webhook-url.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import { BackgroundJobDrivers } from './background-job-drivers.js';
import { appendJobEvent, jobEndedBefore, type BackgroundJobEventBody, type StoredJobEvent } from './background-job-events.js';
import type { BackgroundJobRecord } from './background-job-record.js';
import { BackgroundJobStore } from './background-job-store.js';
import type { BackgroundJobTables } from './background-job-tables.js';
import type { JobFinishOutcome, JobTurnStarter } from './drive-background-job.js';
import { streamJobEvents } from './stream-job-events.js';
import { withoutJobTools } from './without-job-tools.js';

export const MAX_LISTED_JOBS = 32;

export const jobNotFound = (jobId: string) => new ServiceError({ statusCode: 404, code: 'job_not_found', message: `no background job with id "${jobId.slice(0, 200)}"` });
const jobNotRunning = (jobId: string, status: string) => new ServiceError({ statusCode: 409, code: 'job_not_running', message: `background job "${jobId}" has already ended (${status})` });

/**
 * Background agent jobs: stored, driven by one process at a time (the one that claimed it,
 * which says so every few seconds), taken over by another when that one goes quiet, and woken
 * through durable work so exactly one worker of any replica claims it.
 */
export class BackgroundJobService {
  readonly #db: Kysely<BackgroundJobTables>;
  readonly #webhooks: WebhookService;
  readonly #clock: Clock;
  readonly #jobs: BackgroundJobStore;
  readonly #drivers: BackgroundJobDrivers;

  constructor(options: {
    readonly db: Kysely<BackgroundJobTables>;
    readonly durable: DurableWork;
    readonly webhooks: WebhookService;
    readonly store: TurnStore;
    readonly clock: Clock;
    readonly logger: Logger;
    readonly instanceId: string;
    /** Whether this process is the only one on the store (SQLite): at start it takes back every job, whoever drove it. */
    readonly soleProcess: boolean;
  }) {
    this.#db = options.db;
    this.#webhooks = options.webhooks;
    this.#clock = options.clock;
    this.#jobs = new BackgroundJobStore({ db: options.db, clock: options.clock, durable: options.durable, webhooks: options.webhooks });
    this.#drivers = new BackgroundJobDrivers({
      db: options.db,
      durable: options.durable,
      store: options.store,
      clock: options.clock,
      logger: options.logger,
      instanceId: options.instanceId,
      soleProcess: options.soleProcess,
      finish: (jobId, outcome) => this.#finish(jobId, outcome),
    });
  }

  /** Starts driving jobs through `turns`: the ones this process's previous life left, then any that go stale. */
  async start(options: { readonly turns: JobTurnStarter }): Promise<void> {
    this.#webhooks.setRecorder('background_job', (jobId, attempt) =>
      this.#emit(jobId, { type: `webhook.${attempt.outcome}`, webhookId: attempt.webhookId, attempt: attempt.attempt, url: attempt.url, statusCode: attempt.statusCode, error: attempt.error }),
    );
    await this.#drivers.start({ turns: options.turns });
  }

  /** Checks the webhook now (a 400 for a URL that could never be delivered to). */
  checkWebhook(url: string, path: readonly (string | number)[]): void {
    checkWebhookUrl({ url, allowHosts: this.#webhooks.allowHosts, secretConfigured: this.#webhooks.configured, path });
  }

  /**
   * Stores a job and wakes a driver. A second create for the same tool call, or with the
   * `Idempotency-Key` (`key`) of an earlier one, answers that job (`replayed`).
   */
  async create(options: {
    readonly request: WorkRequest;
    readonly title: string;
    readonly instructions: string;
    readonly sourceTurnId?: string;
    readonly sourceCallId?: string;
    readonly key?: CreationKey | undefined;
  }): Promise<Creation<BackgroundJobRecord>> {
    const { request } = options;
    if (request.webhook !== undefined) this.checkWebhook(request.webhook.url, ['webhook', 'url']);
    const id = `job_${randomUUID().replaceAll('-', '')}`;
    const now = this.#clock.now().toISOString();
    const stored = await this.#jobs.insert({
      id,
      request: withoutJobTools(request),
      title: options.title,
      instructions: options.instructions,
      sourceTurnId: options.sourceTurnId,
      sourceCallId: options.sourceCallId,
      key: options.key,
      createdAt: now,
    });
    // Stored with its job.started event and the job that wakes a driver.
    if (stored.created) crashPoint('background-job.created');
    return { record: await this.get(stored.id), replayed: !stored.created };
  }

  async get(jobId: string, agentId?: string): Promise<BackgroundJobRecord> {
    const record = await this.#jobs.readRecord({ jobId, agentId });
    if (record === undefined) throw jobNotFound(jobId);
    return record;
  }

  /** The agent's jobs, newest first. */
  async list(options: { readonly agentId: string; readonly limit: number }): Promise<BackgroundJobRecord[]> {
    const ids = await this.#jobs.listIds(options);
    return Promise.all(ids.map((id) => this.get(id)));
  }

  /** Queues a message for the job's next turn; 409 once the job has ended. */
  async sendMessage(options: { readonly jobId: string; readonly text: string; readonly agentId?: string }): Promise<BackgroundJobRecord> {
    const { jobId } = options;
    const messageId = `msg_${randomUUID().replaceAll('-', '')}`;
    const queued = await this.#jobs.queueMessage({ jobId, messageId, text: options.text, agentId: options.agentId });
    if (!queued) throw await this.#whyNotRunning(jobId, options.agentId);
    return this.get(jobId);
  }

  /** Ends the job `stopped` and aborts its running turn (on whichever replica runs it); 409 once it has ended. */
  async stop(options: { readonly jobId: string; readonly agentId?: string }): Promise<BackgroundJobRecord> {
    const { jobId } = options;
    const stopped = await this.#jobs.markStopped({ jobId, agentId: options.agentId });
    if (!stopped) throw await this.#whyNotRunning(jobId, options.agentId);
    this.#drivers.cancelRunningTurn(jobId);
    return this.get(jobId);
  }

  /**
   * Delivers the job's events after `afterSeq`; with `follow`, keeps polling until the terminal
   * event (or `signal`). Webhook attempts come after the end: they are in later reads.
   */
  async streamEvents(options: { readonly jobId: string; readonly afterSeq: number; readonly follow: boolean; readonly signal: AbortSignal; readonly onEvent: (event: StoredJobEvent) => void }): Promise<void> {
    await streamJobEvents({ ...options, db: this.#db });
  }

  /** Whether the job's terminal event is at or before `seq` (a stream resumed past the end). */
  async endedAtOrBefore(jobId: string, seq: number): Promise<boolean> {
    return jobEndedBefore({ db: this.#db, jobId, seq: seq + 1 });
  }

  /** Stops driving: each driver leaves its job where it is (the next owner goes on with it). */
  /** Forgets jobs that ended before `before`, in bounded batches (see BackgroundJobStore.pruneFinished). */
  pruneFinished(options: { readonly before: string; readonly limit: number }): Promise<number> {
    return this.#jobs.pruneFinished(options);
  }

  async close(): Promise<void> {
    await this.#drivers.close();
  }

  async #whyNotRunning(jobId: string, agentId: string | undefined): Promise<ServiceError> {
    const row = await this.#jobs.readStatus(jobId);
    if (row === undefined || (agentId !== undefined && row.agent_id !== agentId)) return jobNotFound(jobId);
    return jobNotRunning(jobId, row.status);
  }

  /** Ends the job, with its terminal event and webhook in the same transaction. */
  async #finish(jobId: string, outcome: JobFinishOutcome): Promise<boolean> {
    if (!(await this.#jobs.markFinished({ jobId, outcome }))) return false;
    crashPoint('background-job.finished');
    return true;
  }

  async #emit(jobId: string, body: BackgroundJobEventBody): Promise<void> {
    await appendJobEvent({ db: this.#db, clock: this.#clock, jobId, body });
  }
}
