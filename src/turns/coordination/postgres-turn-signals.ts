import pg from 'pg';
import type { Logger } from 'pino';
import { SIGNAL_CHANNEL } from '../../store/coordination-migration.js';
import { SignalListeners } from './signal-listeners.js';
import type { SignalTopic, TurnSignals } from './turn-signals.js';

const TOPICS: ReadonlySet<string> = new Set<SignalTopic>(['events', 'cancel', 'agent']);
const RECONNECT_MS = 1_000;

/**
 * Signals between replicas over PostgreSQL LISTEN/NOTIFY, on one dedicated connection per
 * process (a pooled connection cannot keep listening). Turn events need no publish: a trigger
 * on `turn_events` NOTIFYs at commit. The connection is re-opened when it drops, and then
 * every waiter is woken once, since signals may have been missed meanwhile.
 */
export class PostgresTurnSignals implements TurnSignals {
  readonly #listeners = new SignalListeners();
  readonly #connectionString: string;
  readonly #logger: Logger;
  #client: pg.Client | undefined;
  #ownProcessId: number | undefined;
  #closed = false;
  #reconnect: NodeJS.Timeout | undefined;

  private constructor(options: { connectionString: string; logger: Logger }) {
    this.#connectionString = options.connectionString;
    this.#logger = options.logger;
  }

  /** Connects and starts listening; a failure here is a start-up failure. */
  static async connect(options: { readonly connectionString: string; readonly logger: Logger }): Promise<PostgresTurnSignals> {
    const signals = new PostgresTurnSignals(options);
    await signals.#open();
    return signals;
  }

  async publish(topic: SignalTopic, id: string): Promise<void> {
    // This process's own listeners hear it at once; others through PostgreSQL.
    this.#listeners.deliver(topic, id);
    const client = this.#client;
    if (client === undefined) return;
    try {
      await client.query('select pg_notify($1, $2)', [SIGNAL_CHANNEL, `${topic}:${id}`]);
    } catch (error) {
      this.#logger.warn({ err: error, topic }, 'a signal to the other replicas could not be sent; they will see it when they poll');
    }
  }

  /** The PostgreSQL backend that listens for this process (for operators' pg_stat_activity), while connected. */
  get backendProcessId(): number | undefined {
    return this.#client === undefined ? undefined : this.#ownProcessId;
  }

  subscribe(topic: SignalTopic, id: string, listener: () => void): () => void {
    return this.#listeners.subscribe(topic, id, listener);
  }

  subscribeAll(topic: SignalTopic, listener: (id: string) => void): () => void {
    return this.#listeners.subscribeAll(topic, listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#reconnect !== undefined) clearTimeout(this.#reconnect);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  async #open(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#connectionString, connectionTimeoutMillis: 5_000, application_name: 'turn-runtime signals' });
    client.on('notification', (message) => {
      // Our own NOTIFYs were delivered locally when they were sent; the trigger's are not ours.
      if (message.processId === this.#ownProcessId && !message.payload?.startsWith('events:')) return;
      const payload = message.payload ?? '';
      const colon = payload.indexOf(':');
      const topic = payload.slice(0, colon);
      if (colon < 1 || !TOPICS.has(topic)) return;
      this.#listeners.deliver(topic as SignalTopic, payload.slice(colon + 1));
    });
    client.on('error', (error) => {
      this.#logger.warn({ err: error }, 'the signal connection to PostgreSQL failed; reconnecting');
      this.#lost(client);
    });
    client.on('end', () => {
      this.#lost(client);
    });
    await client.connect();
    await client.query(`listen ${SIGNAL_CHANNEL}`);
    this.#ownProcessId = (client as pg.Client & { processID?: number }).processID;
    this.#client = client;
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    void client.end().catch(() => undefined);
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#reconnect !== undefined) return;
    this.#reconnect = setTimeout(() => {
      this.#reconnect = undefined;
      if (this.#closed) return;
      this.#open()
        .then(() => {
          this.#listeners.deliverToAll();
        })
        .catch((error: unknown) => {
          this.#logger.warn({ err: error }, 'could not reconnect the signal connection to PostgreSQL; retrying');
          this.#scheduleReconnect();
        });
    }, RECONNECT_MS);
    this.#reconnect.unref();
  }
}
