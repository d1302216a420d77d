/**
 * What replicas tell each other: `events` (a turn's events were committed), `cancel` (a cancel
 * request was stored for a turn), `agent` (an agent's lease was given back or its queue moved).
 */
export type SignalTopic = 'events' | 'cancel' | 'agent';

/**
 * A wake-up bus between the processes that share a store. A signal carries no data, only
 * "look again": the store stays the truth, and every waiter also polls, so a signal lost
 * (a dropped LISTEN connection) costs latency, never correctness.
 */
export interface TurnSignals {
  /** Tells every process (this one included) about `id` on `topic`. Never rejects. */
  publish(topic: SignalTopic, id: string): Promise<void>;
  /** Calls `listener` on each signal for `id` on `topic`; returns the unsubscribe function. */
  subscribe(topic: SignalTopic, id: string, listener: () => void): () => void;
  /** Calls `listener` on every signal of `topic`, with its id. */
  subscribeAll(topic: SignalTopic, listener: (id: string) => void): () => void;
  close(): Promise<void>;
}
