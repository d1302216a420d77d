import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { StoredEvent, TurnFinish, TurnStore } from '../store/turn-store.js';
import { TERMINAL_EVENT_TYPES, type CancelReason, type TurnEvent, type TurnEventBody, type TurnKind } from './turn-events.js';

/** Receives each event with its JSON text, serialised once for the store and every stream. */
/** How long an event may wait to be stored together with the ones after it. */
const FLUSH_WINDOW_MS = 5;

export type TurnListener = (event: TurnEvent, stored: StoredEvent) => void;

/**
 * A turn in flight in this process: it numbers its events, writes them to the store in order
 * (in short batches, see #scheduleFlush), and only then delivers them to
 * live listeners. So nothing is ever seen that is not stored: a client that resumes with
 * `Last-Event-ID` after a crash finds exactly what it saw, and the terminal event is stored
 * with the final record before anyone sees it.
 */
export class TurnRun {
  readonly id: string;
  readonly agentId: string;
  readonly kind: TurnKind;
  readonly #controller = new AbortController();
  /** Stored and delivered, in order. */
  readonly #delivered: { event: TurnEvent; stored: StoredEvent }[] = [];
  readonly #listeners = new Set<TurnListener>();
  readonly #store: TurnStore;
  readonly #clock: Clock;
  readonly #logger: Logger;
  /** Numbered, not yet stored. */
  #pending: { event: TurnEvent; stored: StoredEvent }[] = [];
  #nextSeq = 1;
  #flushing: Promise<void> = Promise.resolve();
  #flushScheduled = false;
  #cancelReason: CancelReason | undefined;
  #finished = false;
  #ended = false;
  #suspended = false;
  readonly #done: Promise<void>;
  #resolveDone: () => void = () => undefined;

  constructor(options: {
    id: string;
    agentId: string;
    kind: TurnKind;
    store: TurnStore;
    clock: Clock;
    logger: Logger;
    /** The events a resumed turn already has in the store: replayed to subscribers, numbering goes on after them. */
    history?: readonly StoredEvent[];
  }) {
    for (const stored of options.history ?? []) this.#delivered.push({ event: JSON.parse(stored.json) as TurnEvent, stored });
    this.#nextSeq = (this.#delivered.at(-1)?.event.seq ?? 0) + 1;
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

  /** True once the turn is parked in the store: it goes on (here or on another replica) only when decided. */
  get suspended(): boolean {
    return this.#suspended;
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
   * Numbers an event and queues it; it is stored, then delivered, within the tick. After the
   * end it is dropped: a tool that ignored its signal may still report, but the turn is over.
   */
  emit(body: TurnEventBody): void {
    if (TERMINAL_EVENT_TYPES.has(body.type)) throw new Error('terminal events go through finish()');
    if (this.#finished) {
      this.#logger.debug({ turnId: this.id, type: body.type }, 'event after the end of the turn dropped');
      return;
    }
    this.#pending.push(this.#number(body));
    this.#scheduleFlush();
  }

  /** Stores the terminal event with the final record, then delivers it. Exactly once. */
  async finish(body: TurnEventBody, finish: Omit<TurnFinish, 'finishedAt'>): Promise<void> {
    if (this.#finished) return;
    this.#finished = true;
    const terminal = this.#number(body);
    await this.#flushing;
    const batch = [...this.#pending, terminal];
    this.#pending = [];
    try {
      await this.#store.finishTurn(
        this.id,
        batch.map((entry) => entry.stored),
        { ...finish, finishedAt: terminal.event.at },
      );
    } catch (error) {
      this.#logger.error({ err: error, turnId: this.id }, 'could not store the end of a turn');
    }
    this.#deliver(batch);
    this.#ended = true;
    this.#listeners.clear();
    this.#resolveDone();
  }

  /**
   * Parks the turn: numbers `bodies`, then has `write` store them after every earlier event, in
   * one transaction with whatever the parked turn needs; then delivers them. The run ends in this
   * process without a terminal event (`done` resolves, `suspended` is true). When `write` throws,
   * nothing of it is kept and the run goes on, so the caller can still finish the turn.
   */
  async suspend(bodies: readonly TurnEventBody[], write: (events: readonly StoredEvent[]) => Promise<void>): Promise<void> {
    if (this.#finished) return;
    this.#finished = true;
    const numbered = bodies.map((body) => this.#number(body));
    await this.#flushing;
    const earlier = this.#pending;
    this.#pending = [];
    const batch = [...earlier, ...numbered];
    try {
      await write(batch.map((entry) => entry.stored));
    } catch (error) {
      this.#pending = earlier;
      this.#nextSeq -= numbered.length;
      this.#finished = false;
      throw error;
    }
    this.#suspended = true;
    this.#deliver(batch);
    this.#ended = true;
    this.#listeners.clear();
    this.#resolveDone();
  }

  /**
   * Replays the delivered events after `afterSeq`, then delivers new ones as they are stored,
   * synchronously and in order, so a subscriber never misses or repeats one. Returns the
   * unsubscribe function.
   */
  subscribe(afterSeq: number, listener: TurnListener): () => void {
    for (const entry of this.#delivered) {
      if (entry.event.seq > afterSeq) listener(entry.event, entry.stored);
    }
    if (this.#ended) return () => undefined;
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  #number(body: TurnEventBody): { event: TurnEvent; stored: StoredEvent } {
    // `type`, `turnId`, `seq`, `at` lead every event, so a person reading the stream sees them first.
    const { type, ...fields } = body;
    const event = { type, turnId: this.id, seq: this.#nextSeq, at: this.#clock.now().toISOString(), ...fields } as TurnEvent;
    this.#nextSeq += 1;
    return { event, stored: { seq: event.seq, type: event.type, json: JSON.stringify(event) } };
  }

  #deliver(batch: readonly { event: TurnEvent; stored: StoredEvent }[]): void {
    for (const entry of batch) {
      this.#delivered.push(entry);
      for (const listener of this.#listeners) listener(entry.event, entry.stored);
    }
  }

  /**
   * Events are written in small time windows: one transaction for everything emitted within
   * FLUSH_WINDOW_MS (a burst of tool events, a run of deltas) instead of one per event. Each
   * transaction rewrites at least a page of the log, so this is most of the store's cost,
   * and a few milliseconds more before a person sees an event changes nothing for them.
   */
  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setTimeout(() => {
      this.#flushScheduled = false;
      this.#flushing = this.#flushing.then(() => this.#flush());
    }, FLUSH_WINDOW_MS);
  }

  async #flush(): Promise<void> {
    if (this.#finished || this.#pending.length === 0) return;
    const batch = this.#pending;
    this.#pending = [];
    try {
      await this.#store.appendEvents(
        this.id,
        batch.map((entry) => entry.stored),
      );
    } catch (error) {
      // Deliver anyway: a live client should not hang because the store is failing.
      this.#logger.error({ err: error, turnId: this.id }, 'could not store turn events');
    }
    this.#deliver(batch);
  }
}
