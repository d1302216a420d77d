import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { StoredEvent, TurnFinish, TurnStore } from '../store/turn-store.js';
import { TERMINAL_EVENT_TYPES, type CancelReason, type TurnEvent, type TurnEventBody, type TurnKind } from './turn-events.js';

/** Receives each event with its JSON text, serialised once for the store and every stream. */
export type TurnListener = (event: TurnEvent, stored: StoredEvent) => void;

/**
 * A turn in flight in this process: it numbers its events, fans them out to live listeners,
 * and writes them to the store in order, batching what is emitted in the same tick into one
 * transaction. The terminal event is stored before any listener sees it, so a client that
 * saw the end can read the finished record at once.
 */
export class TurnRun {
  readonly id: string;
  readonly agentId: string;
  readonly kind: TurnKind;
  readonly #controller = new AbortController();
  readonly #events: { event: TurnEvent; stored: StoredEvent }[] = [];
  readonly #listeners = new Set<TurnListener>();
  readonly #store: TurnStore;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #pending: StoredEvent[] = [];
  #flushing: Promise<void> = Promise.resolve();
  #flushScheduled = false;
  #cancelReason: CancelReason | undefined;
  #finished = false;
  #delivered = false;
  readonly #done: Promise<void>;
  #resolveDone: () => void = () => undefined;

  constructor(options: { id: string; agentId: string; kind: TurnKind; store: TurnStore; clock: Clock; logger: Logger }) {
    this.id = options.id;
    this.agentId = options.agentId;
    this.kind = options.kind;
    this.#store = options.store;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#done = new Promise((resolve) => {
      this.#resolveDone = resolve;
    });
  }

  /** Fires when the turn is cancelled for any reason; handed to the model and every tool. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get cancelReason(): CancelReason | undefined {
    return this.#cancelReason;
  }

  get finished(): boolean {
    return this.#finished;
  }

  /** Resolves once the terminal event is stored and delivered. */
  get done(): Promise<void> {
    return this.#done;
  }

  /** Aborts the turn; the first reason wins. */
  cancel(reason: CancelReason): void {
    if (this.#finished || this.#cancelReason !== undefined) return;
    this.#cancelReason = reason;
    this.#controller.abort(new Error(`turn cancelled: ${reason}`));
  }

  /**
   * Numbers an event, delivers it to listeners, and queues it for the store. After the end
   * it is dropped: a tool that ignored its signal may still report, but the turn is over.
   */
  emit(body: TurnEventBody): void {
    if (TERMINAL_EVENT_TYPES.has(body.type)) throw new Error('terminal events go through finish()');
    if (this.#finished) {
      this.#logger.debug({ turnId: this.id, type: body.type }, 'event after the end of the turn dropped');
      return;
    }
    const entry = this.#number(body);
    this.#events.push(entry);
    this.#pending.push(entry.stored);
    this.#scheduleFlush();
    for (const listener of this.#listeners) listener(entry.event, entry.stored);
  }

  /** Stores the terminal event with the final record, then delivers it. Exactly once. */
  async finish(body: TurnEventBody, finish: Omit<TurnFinish, 'finishedAt'>): Promise<void> {
    if (this.#finished) return;
    this.#finished = true;
    const entry = this.#number(body);
    await this.#flushing;
    const remaining = [...this.#pending, entry.stored];
    this.#pending = [];
    try {
      await this.#store.finishTurn(this.id, remaining, { ...finish, finishedAt: entry.event.at });
    } catch (error) {
      this.#logger.error({ err: error, turnId: this.id }, 'could not store the end of a turn');
    }
    this.#events.push(entry);
    this.#delivered = true;
    for (const listener of this.#listeners) listener(entry.event, entry.stored);
    this.#listeners.clear();
    this.#resolveDone();
  }

  /**
   * Replays the events after `afterSeq`, then delivers live ones, synchronously and in order,
   * so a subscriber never misses or repeats one. Returns the unsubscribe function.
   */
  subscribe(afterSeq: number, listener: TurnListener): () => void {
    for (const entry of this.#events) {
      if (entry.event.seq > afterSeq) listener(entry.event, entry.stored);
    }
    if (this.#delivered) return () => undefined;
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  #number(body: TurnEventBody): { event: TurnEvent; stored: StoredEvent } {
    const event = { ...body, turnId: this.id, seq: this.#events.length + 1, at: this.#clock.now().toISOString() };
    return { event, stored: { seq: event.seq, type: event.type, json: JSON.stringify(event) } };
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      this.#flushing = this.#flushing.then(() => this.#flush());
    });
  }

  async #flush(): Promise<void> {
    if (this.#finished || this.#pending.length === 0) return;
    const batch = this.#pending;
    this.#pending = [];
    try {
      await this.#store.appendEvents(this.id, batch);
    } catch (error) {
      this.#logger.error({ err: error, turnId: this.id }, 'could not store turn events');
    }
  }
}
