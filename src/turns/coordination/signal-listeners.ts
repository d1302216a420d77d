import type { SignalTopic } from './turn-signals.js';

/** The in-process half of every TurnSignals: who listens to what, and delivery to them. */
export class SignalListeners {
  readonly #byKey = new Map<string, Set<() => void>>();
  readonly #byTopic = new Map<SignalTopic, Set<(id: string) => void>>();

  subscribe(topic: SignalTopic, id: string, listener: () => void): () => void {
    const key = `${topic}:${id}`;
    let listeners = this.#byKey.get(key);
    if (listeners === undefined) {
      listeners = new Set();
      this.#byKey.set(key, listeners);
    }
    const set = listeners;
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#byKey.delete(key);
    };
  }

  subscribeAll(topic: SignalTopic, listener: (id: string) => void): () => void {
    let listeners = this.#byTopic.get(topic);
    if (listeners === undefined) {
      listeners = new Set();
      this.#byTopic.set(topic, listeners);
    }
    const set = listeners;
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  deliver(topic: SignalTopic, id: string): void {
    for (const listener of [...(this.#byKey.get(`${topic}:${id}`) ?? [])]) listener();
    for (const listener of [...(this.#byTopic.get(topic) ?? [])]) listener(id);
  }

  /** Wakes everyone: after a reconnect, signals may have been missed. */
  deliverToAll(): void {
    for (const listeners of [...this.#byKey.values()]) for (const listener of [...listeners]) listener();
  }
}
