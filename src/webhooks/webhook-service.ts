import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { DurableJob, DurableWork, EnqueueOptions } from '../durable/durable-work.js';
import type { HostLookup } from '../net/guarded-lookup.js';
import type { ServiceMetrics } from '../observability/service-metrics.js';
import { postWebhook, type WebhookAttemptOutcome } from './post-webhook.js';
import { signWebhook } from './sign-webhook.js';
import type { WebhookTables } from './webhook-tables.js';
import type { WebhookBody } from '../turns/webhook-request.js';

const QUEUE = 'webhook-delivery';
/** 5 s doubling: the 10th retry comes about 85 minutes after the first attempt (the contract asks for at least 1 h). */
const RETRY_LIMIT = 10;
const RETRY_DELAY_SECONDS = 5;
const ATTEMPT_TIMEOUT_MS = 10_000;
/** The subject kinds metrics name; anything else is `other`, so the label stays bounded. */
const SUBJECT_KINDS = new Set(['turn', 'workflow', 'background_job']);

/** One stored delivery attempt, as the subject's events and `webhook_attempts` show it. */
export interface WebhookAttempt {
  readonly webhookId: string;
  readonly attempt: number;
  readonly type: string;
  readonly url: string;
  readonly outcome: 'delivered' | 'retrying' | 'failed';
  readonly statusCode: number | null;
  readonly error: string | null;
}

/** Shows an attempt where its subject's events are (a workflow run's event log …). */
export type WebhookAttemptRecorder = (subjectId: string, attempt: WebhookAttempt) => Promise<void>;

/** A webhook to send: where, what it is about, and its body. */
export interface WebhookToSend {
  readonly url: string;
  readonly subjectKind: string;
  readonly body: WebhookBody;
}

interface DeliveryPayload {
  readonly webhookId: string;
  readonly url: string;
  readonly subjectKind: string;
  readonly body: WebhookBody;
}

/**
 * Completion webhooks on durable work: one job per webhook, retried with backoff, each
 * attempt signed afresh (Standard Webhooks: same `webhook-id`, the attempt's own timestamp),
 * stored, and shown to the subject's recorder. A URL the guard refuses at delivery is not
 * retried: it is stored as failed with the reason.
 */
export class WebhookService {
  readonly #durable: DurableWork;
  readonly #db: Kysely<WebhookTables>;
  readonly #secret: Buffer | undefined;
  readonly #allowHosts: readonly string[];
  readonly #lookup: HostLookup | undefined;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #metrics: ServiceMetrics;
  readonly #recorders = new Map<string, WebhookAttemptRecorder>();

  constructor(options: {
    readonly durable: DurableWork;
    readonly db: Kysely<WebhookTables>;
    readonly secret: Buffer | undefined;
    readonly allowHosts: readonly string[];
    readonly lookup?: HostLookup | undefined;
    readonly clock: Clock;
    readonly logger: Logger;
    readonly metrics: ServiceMetrics;
  }) {
    this.#durable = options.durable;
    this.#db = options.db;
    this.#secret = options.secret;
    this.#allowHosts = options.allowHosts;
    this.#lookup = options.lookup;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#metrics = options.metrics;
  }

  get configured(): boolean {
    return this.#secret !== undefined;
  }

  get allowHosts(): readonly string[] {
    return this.#allowHosts;
  }

  /** Defines the delivery queue and starts its workers. */
  async start(): Promise<void> {
    await this.#durable.defineQueue({ name: QUEUE, policy: 'standard', retryLimit: RETRY_LIMIT, retryDelaySeconds: RETRY_DELAY_SECONDS, backoff: true });
    await this.#durable.work({ queue: QUEUE, concurrency: 4, handler: (job) => this.#deliver(job) });
  }

  /** Where attempts about a kind of subject are shown besides `webhook_attempts`. */
  setRecorder(subjectKind: string, recorder: WebhookAttemptRecorder): void {
    this.#recorders.set(subjectKind, recorder);
  }

  /** Stores the webhook for delivery; the first attempt follows within moments. */
  async send(options: WebhookToSend): Promise<string> {
    const job = this.delivery(options);
    await this.#durable.enqueue(job);
    return job.payload.webhookId;
  }

  /**
   * The delivery job of a webhook, with its id (`webhook-id`, the same on every attempt), for
   * the caller to enqueue in the transaction that stores the state change it reports.
   */
  delivery(options: WebhookToSend): EnqueueOptions & { readonly payload: { readonly webhookId: string } } {
    const webhookId = `msg_${randomUUID().replaceAll('-', '')}`;
    const payload: DeliveryPayload = { webhookId, url: options.url, subjectKind: options.subjectKind, body: options.body };
    return { queue: QUEUE, payload: { ...payload, body: { ...payload.body } } };
  }

  async #deliver(job: DurableJob): Promise<void> {
    const payload = job.payload as unknown as DeliveryPayload;
    const secret = this.#secret;
    const body = JSON.stringify(payload.body);
    let outcome: WebhookAttemptOutcome;
    if (secret === undefined) {
      outcome = { kind: 'refused', reason: 'this server has no WEBHOOK_SECRET any more' };
    } else {
      const timestamp = Math.floor(this.#clock.now().getTime() / 1000);
      outcome = await postWebhook({
        url: payload.url,
        body,
        allowHosts: this.#allowHosts,
        timeoutMs: ATTEMPT_TIMEOUT_MS,
        ...(this.#lookup === undefined ? {} : { lookup: this.#lookup }),
        headers: {
          'webhook-id': payload.webhookId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook({ secret, webhookId: payload.webhookId, timestamp, body }),
        },
      });
    }
    const delivered = outcome.kind === 'answered' && outcome.status >= 200 && outcome.status < 300;
    const lastTry = job.attempt > RETRY_LIMIT;
    const attempt: WebhookAttempt = {
      webhookId: payload.webhookId,
      attempt: job.attempt,
      type: payload.body.type,
      url: payload.url,
      outcome: delivered ? 'delivered' : outcome.kind === 'refused' || lastTry ? 'failed' : 'retrying',
      statusCode: outcome.kind === 'answered' ? outcome.status : null,
      error: delivered ? null : describeFailure(outcome, lastTry, job.attempt),
    };
    await this.#record(payload, attempt);
    this.#metrics.webhookDeliveries.inc({
      subject: SUBJECT_KINDS.has(payload.subjectKind) ? payload.subjectKind : 'other',
      outcome: outcome.kind === 'refused' ? 'refused' : attempt.outcome,
    });
    if (attempt.outcome === 'retrying') throw new Error(attempt.error ?? 'not delivered');
  }

  async #record(payload: DeliveryPayload, attempt: WebhookAttempt): Promise<void> {
    await this.#db
      .insertInto('webhook_attempts')
      .values({
        webhook_id: attempt.webhookId,
        attempt: attempt.attempt,
        subject_kind: payload.subjectKind,
        subject_id: payload.body.id,
        type: attempt.type,
        url: attempt.url,
        at: this.#clock.now().toISOString(),
        outcome: attempt.outcome,
        status_code: attempt.statusCode,
        error: attempt.error,
      })
      .onConflict((conflict) => conflict.columns(['webhook_id', 'attempt']).doNothing())
      .execute();
    const recorder = this.#recorders.get(payload.subjectKind);
    try {
      await recorder?.(payload.body.id, attempt);
    } catch (error) {
      this.#logger.warn({ err: error, webhookId: attempt.webhookId }, 'could not show a webhook attempt in its events');
    }
  }

  /** The stored attempts of webhooks about one subject, oldest first. */
  /** Forgets up to `limit` delivery attempts made before `before` (ISO 8601); answers how many. */
  async pruneAttempts(options: { readonly before: string; readonly limit: number }): Promise<number> {
    const deleted = await this.#db
      .deleteFrom('webhook_attempts')
      .where((eb) =>
        eb(
          eb.refTuple('webhook_id', 'attempt'),
          'in',
          eb.selectFrom('webhook_attempts as old').select(['old.webhook_id', 'old.attempt']).where('old.at', '<', options.before).limit(options.limit).$asTuple('webhook_id', 'attempt'),
        ),
      )
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }

  async listAttempts(subjectKind: string, subjectId: string): Promise<(WebhookAttempt & { readonly at: string })[]> {
    const rows = await this.#db.selectFrom('webhook_attempts').selectAll().where('subject_kind', '=', subjectKind).where('subject_id', '=', subjectId).orderBy('at').orderBy('attempt').execute();
    return rows.map((row) => ({
      webhookId: row.webhook_id,
      attempt: row.attempt,
      type: row.type,
      url: row.url,
      outcome: row.outcome as WebhookAttempt['outcome'],
      statusCode: row.status_code,
      error: row.error,
      at: row.at,
    }));
  }
}

function describeFailure(outcome: WebhookAttemptOutcome, lastTry: boolean, attempt: number): string {
  const what = outcome.kind === 'answered' ? `the receiver answered ${outcome.status}` : outcome.reason;
  if (outcome.kind === 'refused') return `refused: ${what}`;
  return lastTry ? `${what}; gave up after ${attempt} attempts` : what;
}
