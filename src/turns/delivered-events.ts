import type { TurnEvent } from '../events/turn-events.js';
import type { StoredEvent } from '../store/turn-record.js';
import { EventWindow, type NumberedEvent } from './event-window.js';

/**
 * Receives each delivered event with its JSON text (serialised once for the store and every
 * stream). Returning `false` detaches the listener: a consumer that fell behind stops taking
 * events from memory and reads the store instead.
 */
export type TurnListener = (event: TurnEvent, stored: StoredEvent) => boolean;

/**
 * A run's delivered (stored) events: the latest stay in memory for listeners that attach late,
 * and every live listener gets each event synchronously, in order.
 */
export class DeliveredEvents {
  readonly #window = new EventWindow();
  readonly #listeners = new Set<TurnListener>();
  #closed = false;

  /** Keeps an event the run had before this process delivered anything (history), for late listeners. */
  remember(entry: NumberedEvent): void {
    this.#window.push(entry);
  }

  deliver(batch: readonly NumberedEvent[]): void {
    for (const entry of batch) {
      this.#window.push(entry);
      for (const listener of this.#listeners) {
        if (!listener(entry.event, entry.stored)) this.#listeners.delete(listener);
      }
    }
  }

  /**
   * Replays the events after `afterSeq` still in memory, then delivers new ones. Returns the
   * detach function, or `undefined` when some event after `afterSeq` has already left the window.
   */
  attach(afterSeq: number, listener: TurnListener): (() => void) | undefined {
    if (!this.#window.covers(afterSeq)) return undefined;
    for (const entry of this.#window.after(afterSeq)) {
      if (!listener(entry.event, entry.stored)) return () => undefined;
    }
    if (this.#closed) return () => undefined;
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** The run is over: nothing more comes, and nobody stays attached. */
  close(): void {
    this.#closed = true;
    this.#listeners.clear();
  }
}
