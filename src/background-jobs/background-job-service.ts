import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { pause } from '../concurrency/wait.js';
import type { DurableWork } from '../durable/durable-work.js';
import type { WorkRequest } from '../turns/work-request.js';
import { ServiceError } from '../service-error.js';
import type { TurnStore } from '../store/turn-store.js';
import type { TurnRun } from '../turns/turn-run.js';
import { checkWebhookUrl } from '../webhooks/check-webhook-url.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import { appendJobEvent, JOB_TERMINAL_EVENTS, listJobEvents, type BackgroundJobEventBody, type StoredJobEvent } from './background-job-events.js';
import { toBackgroundJobRecord, type BackgroundJobRecord } from './background-job-record.js';
import type { BackgroundJobTables } from './background-job-tables.js';
import { driveBackgroundJob, type JobTurnStarter } from './drive-background-job.js';

const WAKE_QUEUE = 'background-job-wake';
const HEARTBEAT_MS = 5_000;
/** A job whose owner has not said it is alive for this long is taken over by another process. */
const STALE_AFTER_MS = 30_000;
const SWEEP_MS = 10_000;
const EVENT_POLL_MS = 200;
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
  readonly #durable: DurableWork;
  readonly #webhooks: WebhookService;
  readonly #store: TurnStore;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #instanceId: string;
  readonly #driving = new Map<string, { promise: Promise<void>; run: TurnRun | undefined }>();
  readonly #stopping = new AbortController();
  readonly #timers: NodeJS.Timeout[] = [];
  #turns: JobTurnStarter | undefined;

  constructor(options: {
    readonly db: Kysely<BackgroundJobTables>;
    readonly durable: DurableWork;
    readonly webhooks: WebhookService;
    readonly store: TurnStore;
    readonly clock: Clock;
    readonly logger: Logger;
    readonly instanceId: string;
  }) {
    this.#db = options.db;
    this.#durable = options.durable;
    this.#webhooks = options.webhooks;
    this.#store = options.store;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#instanceId = options.instanceId;
  }

  /** Starts driving jobs through `turns`: the ones this process's previous life left, then any that go stale. */
  async start(options: { readonly turns: JobTurnStarter }): Promise<void> {
    this.#turns = options.turns;
    this.#webhooks.setRecorder('background_job', (jobId, attempt) =>
      this.#emit(jobId, { type: `webhook.${attempt.outcome}`, webhookId: attempt.webhookId, attempt: attempt.attempt, url: attempt.url, statusCode: attempt.statusCode, error: attempt.error }),
    );
    await this.#durable.defineQueue({ name: WAKE_QUEUE, policy: 'stately', leaseSeconds: 60, retryLimit: 5, retryDelaySeconds: 2, backoff: true });
    await this.#db.updateTable('background_jobs').set({ owner: null }).where('owner', '=', this.#instanceId).where('status', '=', 'running').execute();
    await this.#durable.work({ queue: WAKE_QUEUE, concurrency: 2, handler: (job) => this.#claim(typeof job.payload['jobId'] === 'string' ? job.payload['jobId'] : '') });
    await this.#sweep();
    this.#every(HEARTBEAT_MS, 'job heartbeat', () => this.#heartbeat());
    this.#every(SWEEP_MS, 'job sweep', () => this.#sweep());
  }

  /** Checks the webhook now (a 400 for a URL that could never be delivered to). */
  checkWebhook(url: string, path: readonly (string | number)[]): void {
    checkWebhookUrl({ url, allowHosts: this.#webhooks.allowHosts, secretConfigured: this.#webhooks.configured, path });
  }

  async create(options: { readonly request: WorkRequest; readonly title: string; readonly instructions: string; readonly sourceTurnId?: string; readonly sourceCallId?: string }): Promise<BackgroundJobRecord> {
    const { request } = options;
    if (request.webhook !== undefined) this.checkWebhook(request.webhook.url, ['webhook', 'url']);
    const id = `job_${randomUUID().replaceAll('-', '')}`;
    const now = this.#clock.now().toISOString();
    // No nesting: the job's turns never get the job tools.
    const { backgroundJobs: _omitted, ...tools } = request.agent.tools ?? {};
    const stored: WorkRequest = { ...request, agent: { ...request.agent, tools } };
    await this.#db
      .insertInto('background_jobs')
      .values({
        id,
        agent_id: request.agent.id,
        title: options.title,
        instructions: options.instructions,
        request_json: JSON.stringify(stored),
        status: 'running',
        output: null,
        error_json: null,
        message_count: 0,
        owner: null,
        heartbeat_at: null,
        source_turn_id: options.sourceTurnId ?? null,
        source_call_id: options.sourceCallId ?? null,
        created_at: now,
        finished_at: null,
      })
      .execute();
    await this.#emit(id, { type: 'job.started', agentId: request.agent.id, title: options.title });
    await this.#wake(id);
    return this.get(id);
  }

  async get(jobId: string, agentId?: string): Promise<BackgroundJobRecord> {
    const row = await this.#db.selectFrom('background_jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
    if (row === undefined || (agentId !== undefined && row.agent_id !== agentId)) throw jobNotFound(jobId);
    const turns = await this.#db.selectFrom('background_job_turns').selectAll().where('job_id', '=', jobId).orderBy('turn_index').execute();
    const pending = await this.#db.selectFrom('background_job_messages').select((eb) => eb.fn.countAll().as('count')).where('job_id', '=', jobId).where('turn_index', 'is', null).executeTakeFirst();
    return toBackgroundJobRecord(row, turns, Number(pending?.count ?? 0));
  }

  /** The agent's jobs, newest first. */
  async list(options: { readonly agentId: string; readonly limit: number }): Promise<BackgroundJobRecord[]> {
    const rows = await this.#db.selectFrom('background_jobs').select('id').where('agent_id', '=', options.agentId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
    return Promise.all(rows.map((row) => this.get(row.id)));
  }

  /** Queues a message for the job's next turn; 409 once the job has ended. */
  async sendMessage(options: { readonly jobId: string; readonly text: string; readonly agentId?: string }): Promise<BackgroundJobRecord> {
    const { jobId } = options;
    const messageId = `msg_${randomUUID().replaceAll('-', '')}`;
    const queued = await this.#db.transaction().execute(async (trx) => {
      // Counting first locks the job row: the driver's "no message came" completion check sees this one.
      const result = await trx
        .updateTable('background_jobs')
        .set((eb) => ({ message_count: eb('message_count', '+', 1) }))
        .where('id', '=', jobId)
        .where('status', '=', 'running')
        .$if(options.agentId !== undefined, (query) => query.where('agent_id', '=', options.agentId ?? ''))
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await trx.insertInto('background_job_messages').values({ id: messageId, job_id: jobId, text: options.text, turn_index: null, created_at: this.#clock.now().toISOString() }).execute();
      return true;
    });
    if (!queued) throw await this.#whyNotRunning(jobId, options.agentId);
    await this.#emit(jobId, { type: 'job.message_queued', messageId, text: options.text });
    return this.get(jobId);
  }

  /** Ends the job `stopped` and aborts its running turn (on whichever replica runs it); 409 once it has ended. */
  async stop(options: { readonly jobId: string; readonly agentId?: string }): Promise<BackgroundJobRecord> {
    const { jobId } = options;
    const result = await this.#db
      .updateTable('background_jobs')
      .set({ status: 'stopped', finished_at: this.#clock.now().toISOString() })
      .where('id', '=', jobId)
      .where('status', '=', 'running')
      .$if(options.agentId !== undefined, (query) => query.where('agent_id', '=', options.agentId ?? ''))
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) throw await this.#whyNotRunning(jobId, options.agentId);
    this.#driving.get(jobId)?.run?.cancel('cancel_requested');
    await this.#ended(jobId, 'stopped', { type: 'job.stopped' });
    return this.get(jobId);
  }

  /**
   * Delivers the job's events after `afterSeq`; with `follow`, keeps polling until the terminal
   * event (or `signal`). Webhook attempts come after the end: they are in later reads.
   */
  async streamEvents(options: { readonly jobId: string; readonly afterSeq: number; readonly follow: boolean; readonly signal: AbortSignal; readonly onEvent: (event: StoredJobEvent) => void }): Promise<void> {
    let afterSeq = options.afterSeq;
    for (;;) {
      const events = await listJobEvents({ db: this.#db, jobId: options.jobId, afterSeq, limit: 500 });
      for (const event of events) {
        options.onEvent(event);
        afterSeq = event.seq;
        if (options.follow && JOB_TERMINAL_EVENTS.has(event.type)) return;
      }
      if (events.length === 500) continue;
      if (!options.follow || options.signal.aborted) return;
      if (await this.#terminalBefore(options.jobId, options.afterSeq)) return;
      await pause(EVENT_POLL_MS, options.signal);
    }
  }

  /** Whether the job's terminal event is at or before `seq` (a stream resumed past the end). */
  async endedAtOrBefore(jobId: string, seq: number): Promise<boolean> {
    return this.#terminalBefore(jobId, seq + 1);
  }

  /** Stops driving: each driver leaves its job where it is (the next owner goes on with it). */
  async close(): Promise<void> {
    this.#stopping.abort();
    for (const timer of this.#timers) clearInterval(timer);
    await Promise.all([...this.#driving.values()].map((entry) => entry.promise));
  }

  async #terminalBefore(jobId: string, seq: number): Promise<boolean> {
    const row = await this.#db.selectFrom('background_job_events').select('seq').where('job_id', '=', jobId).where('type', 'in', [...JOB_TERMINAL_EVENTS]).executeTakeFirst();
    return row !== undefined && row.seq < seq;
  }

  async #whyNotRunning(jobId: string, agentId: string | undefined): Promise<ServiceError> {
    const row = await this.#db.selectFrom('background_jobs').select(['status', 'agent_id']).where('id', '=', jobId).executeTakeFirst();
    if (row === undefined || (agentId !== undefined && row.agent_id !== agentId)) return jobNotFound(jobId);
    return jobNotRunning(jobId, row.status);
  }

  async #wake(jobId: string): Promise<void> {
    await this.#durable.enqueue({ queue: WAKE_QUEUE, payload: { jobId }, singletonKey: jobId });
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
      emit: (body) => this.#emit(jobId, body),
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

  async #finish(jobId: string, outcome: { status: 'completed'; output: string | null; messageCount: number } | { status: 'failed'; error: { code: string; message: string } }): Promise<boolean> {
    const finishedAt = this.#clock.now().toISOString();
    const query = this.#db.updateTable('background_jobs').where('id', '=', jobId).where('status', '=', 'running');
    const result =
      outcome.status === 'completed'
        ? await query.set({ status: 'completed', output: outcome.output, finished_at: finishedAt }).where('message_count', '=', outcome.messageCount).executeTakeFirst()
        : await query.set({ status: 'failed', error_json: JSON.stringify(outcome.error), finished_at: finishedAt }).executeTakeFirst();
    if (result.numUpdatedRows === 0n) return false;
    await this.#ended(jobId, outcome.status, outcome.status === 'completed' ? { type: 'job.completed', output: outcome.output } : { type: 'job.failed', error: outcome.error });
    return true;
  }

  async #ended(jobId: string, status: 'completed' | 'failed' | 'stopped', body: BackgroundJobEventBody): Promise<void> {
    await this.#emit(jobId, body);
    const row = await this.#db.selectFrom('background_jobs').select(['agent_id', 'request_json']).where('id', '=', jobId).executeTakeFirst();
    if (row === undefined) return;
    const request = JSON.parse(row.request_json) as WorkRequest;
    if (request.webhook === undefined) return;
    await this.#webhooks.send({ url: request.webhook.url, subjectKind: 'background_job', body: { type: `background_job.${status}`, id: jobId, agentId: row.agent_id, status } });
  }

  async #emit(jobId: string, body: BackgroundJobEventBody): Promise<void> {
    await appendJobEvent({ db: this.#db, clock: this.#clock, jobId, body });
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
    for (const row of rows) if (!this.#driving.has(row.id)) await this.#wake(row.id);
  }

  #every(intervalMs: number, what: string, task: () => Promise<unknown>): void {
    const timer = setInterval(() => {
      task().catch((error: unknown) => {
        this.#logger.warn({ err: error }, `${what} failed`);
      });
    }, intervalMs);
    timer.unref();
    this.#timers.push(timer);
  }
}
