import { SignalListeners } from './signal-listeners.js';
import type { SignalTopic, TurnSignals } from './turn-signals.js';

/** Signals within one process: the SQLite store has exactly one. */
export class LocalTurnSignals implements TurnSignals {
  readonly #listeners = new SignalListeners();

  publish(topic: SignalTopic, id: string): Promise<void> {
    // Delivered on a later tick, as a notification from PostgreSQL would be: never inside the publisher's own transaction.
    setImmediate(() => {
      this.#listeners.deliver(topic, id);
    });
    return Promise.resolve();
  }

  subscribe(topic: SignalTopic, id: string, listener: () => void): () => void {
    return this.#listeners.subscribe(topic, id, listener);
  }

  subscribeAll(topic: SignalTopic, listener: (id: string) => void): () => void {
    return this.#listeners.subscribeAll(topic, listener);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
