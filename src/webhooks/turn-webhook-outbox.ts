import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { runEvery } from '../concurrency/run-every.js';
import type { DurableWork } from '../durable/durable-work.js';
import { transactionWithJobs } from '../durable/transaction-with-jobs.js';
import type { TurnWebhooks } from '../turns/turn-webhooks.js';
import { checkWebhookUrl } from './check-webhook-url.js';
import type { WebhookService } from './webhook-service.js';

/** The tables the outbox reads: the turns' stored webhooks, and the turns (see the store's migrations). */
export type TurnWebhookTables = {
  turn_webhooks: { turn_id: string; url: string; created_at: string; enqueued_at: string | null };
  turns: { id: string; agent_id: string; status: string; finished_at: string | null };
};

/** How often each replica looks for ended turns whose webhook is still waiting (a crash, or a turn interrupted by another replica). */
const SWEEP_MS = 5_000;
const SWEEP_BATCH = 200;
const ENDED: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled', 'interrupted']);

/**
 * Turn webhooks through an outbox: the webhook is stored with the turn when it is admitted, and
 * once the turn has ended its delivery job is enqueued in the transaction that marks the row
 * enqueued (compare and set), so each ended turn gets exactly one delivery id, whoever moves it:
 * the process that ran the turn, at once, or any replica's sweep, for a turn whose process died
 * before (or that another replica ended `interrupted`). Types: `turn.completed`, `turn.failed`,
 * `turn.cancelled`, and `turn.interrupted`.
 */
export class TurnWebhookOutbox implements TurnWebhooks {
  readonly #db: Kysely<TurnWebhookTables>;
  readonly #durable: DurableWork;
  readonly #webhooks: WebhookService;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: { readonly db: Kysely<TurnWebhookTables>; readonly durable: DurableWork; readonly webhooks: WebhookService; readonly clock: Clock; readonly logger: Logger }) {
    this.#db = options.db;
    this.#durable = options.durable;
    this.#webhooks = options.webhooks;
    this.#clock = options.clock;
    this.#logger = options.logger;
  }

  check(url: string): void {
    checkWebhookUrl({ url, allowHosts: this.#webhooks.allowHosts, secretConfigured: this.#webhooks.configured, path: ['webhook', 'url'] });
  }

  /** Sweeps now, then every few seconds. */
  async start(): Promise<void> {
    await this.sweep();
    this.#timer = runEvery({ intervalMs: SWEEP_MS, what: 'turn webhook sweep', task: () => this.sweep(), logger: this.#logger });
  }

  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
  }

  async ended(turnId: string): Promise<void> {
    await transactionWithJobs({ db: this.#db, durable: this.#durable }, async (trx, enqueue) => {
      const row = await trx
        .selectFrom('turn_webhooks')
        .innerJoin('turns', 'turns.id', 'turn_webhooks.turn_id')
        .select(['turn_webhooks.url', 'turns.agent_id', 'turns.status'])
        .where('turn_webhooks.turn_id', '=', turnId)
        .where('turn_webhooks.enqueued_at', 'is', null)
        .executeTakeFirst();
      // None, already sent, or not ended (a parked turn waits for its resumed run's end).
      if (row === undefined || !ENDED.has(row.status)) return;
      const claimed = await trx.updateTable('turn_webhooks').set({ enqueued_at: this.#clock.now().toISOString() }).where('turn_id', '=', turnId).where('enqueued_at', 'is', null).executeTakeFirst();
      if (claimed.numUpdatedRows === 0n) return;
      await enqueue(this.#webhooks.delivery({ url: row.url, subjectKind: 'turn', body: { type: `turn.${row.status}`, id: turnId, agentId: row.agent_id, status: row.status } }));
    });
  }

  /** Queues the webhook of every ended turn whose webhook still waits. */
  /** Forgets up to `limit` outbox rows whose delivery was queued before `before` (ISO 8601); answers how many. */
  async prune(options: { readonly before: string; readonly limit: number }): Promise<number> {
    const deleted = await this.#db
      .deleteFrom('turn_webhooks')
      .where('turn_id', 'in', (eb) => eb.selectFrom('turn_webhooks as sent').select('sent.turn_id').where('sent.enqueued_at', '<', options.before).limit(options.limit))
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }

  async sweep(): Promise<void> {
    for (;;) {
      const rows = await this.#db
        .selectFrom('turn_webhooks')
        .innerJoin('turns', 'turns.id', 'turn_webhooks.turn_id')
        .select('turn_webhooks.turn_id')
        .where('turn_webhooks.enqueued_at', 'is', null)
        .where('turns.finished_at', 'is not', null)
        .orderBy('turn_webhooks.created_at')
        .limit(SWEEP_BATCH)
        .execute();
      for (const row of rows) await this.ended(row.turn_id);
      if (rows.length < SWEEP_BATCH) return;
    }
  }
}
