import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { onePerLoopTurn } from '../concurrency/one-per-loop-turn.js';
import { retryStoreWrite } from '../store/retry-store-write.js';
import type { TurnStore } from '../store/turn-store.js';
import type { StoredEvent, TurnFinish, TurnProgress } from '../store/turn-record.js';
import { DeltaCoalescer } from './delta-coalescer.js';
import { DeliveredEvents, type TurnListener } from './delivered-events.js';
import { numberEvent, type NumberedEvent } from './event-window.js';
import { storeFailedOutcome } from './turn-outcome.js';
import { TERMINAL_EVENT_TYPES, type CancelReason, type TurnEvent, type TurnEventBody, type TurnKind } from '../events/turn-events.js';

/** How long an event may wait to be stored together with the ones after it. */
const FLUSH_WINDOW_MS = 5;

/** Why a turn's events could not be stored; the turn then ends `failed` with code `store_error`. */
export interface StoreFailure {
  readonly error: unknown;
}

/**
 * A turn in flight in this process: it numbers its events, writes them to the store in order
 * (in short batches, see #scheduleFlush; a failed write is retried), and only then delivers
 * them to live listeners. So nothing is ever seen that is not stored: a client that resumes
 * with `Last-Event-ID` finds exactly what it saw, and the terminal event is stored with the
 * final record before anyone sees it. Runs of `message.delta` are coalesced before they are
 * numbered, and only a bounded window of delivered events stays in memory; a listener that
 * needs older ones reads them from the store.
 */
export class TurnRun {
  readonly id: string;
  readonly agentId: string;
  readonly kind: TurnKind;
  readonly #controller = new AbortController();
  readonly #delivered = new DeliveredEvents();
  readonly #deltas: DeltaCoalescer;
  readonly #store: TurnStore;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #retryDelaysMs: readonly number[] | undefined;
  /** Numbered, not yet stored. */
  #pending: NumberedEvent[] = [];
  #progress: TurnProgress | undefined;
  #nextSeq = 1;
  #lastStoredSeq = 0;
  #flushing: Promise<void> = Promise.resolve();
  #flushScheduled = false;
  #cancelReason: CancelReason | undefined;
  #storeFailure: StoreFailure | undefined;
  #finished = false;
  #ended = false;
  #suspended = false;
  readonly #releasesAgent: boolean;
  #agentReleased = false;
  readonly #done: Promise<void>;
  #resolveDone: () => void = () => undefined;

  constructor(options: {
    id: string;
    agentId: string;
    kind: TurnKind;
    store: TurnStore;
    clock: Clock;
    logger: Logger;
    /** Waits between attempts of a failed store write (tests shorten them). */
    retryDelaysMs?: readonly number[];
    /**
     * The events the turn already has in the store (a resumed turn's, or the `turn.started`
     * stored with the admission): the window holds the latest, numbering goes on after them.
     */
    history?: readonly (StoredEvent | NumberedEvent)[];
    /** The turn takes its agent's lease: its end gives the lease back in the same transaction (see `agentReleased`). */
    releasesAgent?: boolean;
  }) {
    this.id = options.id;
    this.agentId = options.agentId;
    this.kind = options.kind;
    this.#store = options.store;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#retryDelaysMs = options.retryDelaysMs;
    this.#releasesAgent = options.releasesAgent ?? false;
    this.#deltas = new DeltaCoalescer({ now: () => this.#clock.now().toISOString() });
    for (const entry of options.history ?? []) {
      const numbered = 'stored' in entry ? entry : { event: JSON.parse(entry.json) as TurnEvent, stored: entry };
      this.#delivered.remember(numbered);
      this.#lastStoredSeq = numbered.stored.seq;
    }
    this.#nextSeq = this.#lastStoredSeq + 1;
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

  /** Set when events could not be stored even after retries: the turn is stopped and ends `failed`. */
  get storeFailure(): StoreFailure | undefined {
    return this.#storeFailure;
  }

  get finished(): boolean {
    return this.#finished;
  }

  /** True once `finish` is complete: the terminal event stored and delivered (or refused by the store). */
  get over(): boolean {
    return this.#ended;
  }

  /** True once the turn is parked in the store: it goes on (here or on another replica) only when decided. */
  get suspended(): boolean {
    return this.#suspended;
  }

  /** True once the stored end of the turn also gave its agent's lease back; otherwise the caller gives it back. */
  get agentReleased(): boolean {
    return this.#agentReleased;
  }

  /** Resolves once the turn is over: its terminal event stored and delivered (or, if the store refused it, logged). */
  get done(): Promise<void> {
    return this.#done;
  }

  /** Aborts the turn; the first reason wins. */
  cancel(reason: CancelReason): void {
    if (this.#finished || this.#cancelReason !== undefined || this.#storeFailure !== undefined) return;
    this.#cancelReason = reason;
    this.#controller.abort(new Error(`turn cancelled: ${reason}`));
  }

  /**
   * Numbers an event and queues it; it is stored, then delivered, within a few milliseconds.
   * Deltas of one message are merged first (see DeltaCoalescer). After the end it is dropped:
   * a tool that ignored its signal may still report, but the turn is over.
   */
  emit(body: TurnEventBody): void {
    if (TERMINAL_EVENT_TYPES.has(body.type)) throw new Error('terminal events go through finish()');
    if (this.#finished || this.#storeFailure !== undefined) {
      this.#logger.debug({ turnId: this.id, type: body.type }, 'event after the end of the turn dropped');
      return;
    }
    if (body.type === 'message.delta') {
      for (const closed of this.#deltas.add({ iteration: body.iteration, delta: body.delta })) this.#pending.push(this.#number(closed.body, closed.at));
    } else {
      this.#closeDelta();
      this.#pending.push(this.#number(body));
    }
    this.#scheduleFlush();
  }

  /** Keeps the turn's iterations and usage; written to its record with the next batch. */
  recordProgress(progress: TurnProgress): void {
    if (this.#finished) return;
    this.#progress = { iterations: progress.iterations, usage: { ...progress.usage } };
    this.#scheduleFlush();
  }

  /**
   * Stores the terminal event with the final record, then delivers it. Exactly once. When the
   * turn's events could not be stored, the unstored ones are dropped (nobody saw them) and the
   * terminal event follows the last stored one. When even the end cannot be stored, nothing is
   * delivered and the record stays `running` until the orphan sweep interrupts it.
   */
  async finish(body: TurnEventBody, finish: Omit<TurnFinish, 'finishedAt'>): Promise<void> {
    if (this.#finished) return;
    this.#finished = true;
    // Cancelled turns often end together (a crowd of clients leaving): their endings are stored
    // one per turn of the event loop, so that the aborts of turns still to be cancelled are not
    // held up behind all of them.
    if (this.#cancelReason !== undefined) await onePerLoopTurn();
    await this.#flushing;
    if (this.#storeFailure !== undefined) {
      this.#pending = [];
      this.#deltas.take();
      this.#nextSeq = this.#lastStoredSeq + 1;
    }
    this.#closeDelta();
    const terminal = this.#number(body);
    const batch = [...this.#pending, terminal];
    this.#pending = [];
    let delivered: NumberedEvent[] | undefined = (await this.#finishWith(batch, finish)) ? batch : undefined;
    if (delivered === undefined && batch.length > 1) {
      // Perhaps the events were the trouble: end the turn after the last stored one, failed.
      this.#nextSeq = this.#lastStoredSeq + 1;
      const failed = storeFailedOutcome(finish);
      const alone = this.#number(failed.event);
      if (await this.#finishWith([alone], failed.finish)) delivered = [alone];
    }
    if (delivered !== undefined) this.#delivered.deliver(delivered);
    this.#ended = true;
    this.#delivered.close();
    this.#resolveDone();
  }

  async #finishWith(batch: readonly NumberedEvent[], finish: Omit<TurnFinish, 'finishedAt'>): Promise<boolean> {
    const finishedAt = batch.at(-1)?.event.at ?? this.#clock.now().toISOString();
    const stored = await this.#write('store the end of a turn', () =>
      this.#store.finishTurn(
        this.id,
        batch.map((entry) => entry.stored),
        { ...finish, finishedAt },
        this.#releasesAgent ? { releaseAgent: this.agentId } : {},
      ),
    );
    if (stored && this.#releasesAgent) this.#agentReleased = true;
    return stored;
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
    await this.#flushing;
    this.#closeDelta();
    const earlier = this.#pending;
    this.#pending = [];
    const numbered = bodies.map((body) => this.#number(body));
    const batch = [...earlier, ...numbered];
    try {
      await write(batch.map((entry) => entry.stored));
    } catch (error) {
      this.#pending = earlier;
      this.#nextSeq -= numbered.length;
      this.#finished = false;
      throw error;
    }
    this.#lastStoredSeq = batch.at(-1)?.event.seq ?? this.#lastStoredSeq;
    this.#suspended = true;
    this.#delivered.deliver(batch);
    this.#ended = true;
    this.#delivered.close();
    this.#resolveDone();
  }

  /**
   * Replays the delivered events after `afterSeq` that are still in memory, then delivers new
   * ones as they are stored, synchronously and in order. Returns the detach function, or
   * `undefined` when some event after `afterSeq` has already left the in-memory window: the
   * caller reads the store up to where the window starts, then attaches again.
   */
  attach(afterSeq: number, listener: TurnListener): (() => void) | undefined {
    return this.#delivered.attach(afterSeq, listener);
  }

  #number(body: TurnEventBody, at?: string): NumberedEvent {
    const numbered = numberEvent({ turnId: this.id, seq: this.#nextSeq, at: at ?? this.#clock.now().toISOString(), body });
    this.#nextSeq += 1;
    return numbered;
  }

  #closeDelta(): void {
    const open = this.#deltas.take();
    if (open !== undefined) this.#pending.push(this.#number(open.body, open.at));
  }

  /** Runs a store write with retries; false (logged) when it failed for good. */
  async #write(what: string, write: () => Promise<void>): Promise<boolean> {
    try {
      await retryStoreWrite({
        write,
        ...(this.#retryDelaysMs === undefined ? {} : { delaysMs: this.#retryDelaysMs }),
        onRetry: (error, attempt) => {
          this.#logger.warn({ err: error, turnId: this.id, attempt }, `could not ${what}; retrying`);
        },
      });
      return true;
    } catch (error) {
      this.#logger.error({ err: error, turnId: this.id }, `could not ${what}`);
      if (this.#storeFailure === undefined) this.#storeFailure = { error };
      return false;
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
    if (this.#finished || this.#storeFailure !== undefined) return;
    this.#closeDelta();
    const batch = this.#pending;
    this.#pending = [];
    const progress = this.#progress;
    this.#progress = undefined;
    if (batch.length === 0) {
      if (progress !== undefined) {
        // Progress is a convenience for interrupted turns; failing to keep it ends nothing.
        await this.#store.recordProgress(this.id, progress).catch((error: unknown) => {
          this.#logger.warn({ err: error, turnId: this.id }, 'could not record turn progress');
        });
      }
      return;
    }
    // The progress goes with the events, in one transaction.
    const stored = await this.#write('store turn events', () =>
      this.#store.appendEvents(
        this.id,
        batch.map((entry) => entry.stored),
        progress,
      ),
    );
    if (!stored) {
      // Nobody may see what the store lacks: stop the turn; it ends `failed` (see finish).
      this.#controller.abort(new Error('turn events could not be stored'));
      return;
    }
    this.#lastStoredSeq = batch.at(-1)?.event.seq ?? this.#lastStoredSeq;
    this.#delivered.deliver(batch);
  }
}
