import { pause } from '../concurrency/wait.js';

/**
 * The idle waits of a durable runner's pollers, one set per queue: a poller with nothing to
 * claim sleeps up to its poll interval, and an enqueue on this process (or a stop) wakes it
 * at once instead.
 */
export class QueueWakers {
  readonly #wakers = new Map<string, Set<() => void>>();

  /** Sleeps up to `pollMs`, or until `wake(queue)`, `wakeAll()` or `signal`. */
  async idle(queue: string, pollMs: number, signal: AbortSignal): Promise<void> {
    const wakers = this.#wakers.get(queue) ?? new Set<() => void>();
    this.#wakers.set(queue, wakers);
    const controller = new AbortController();
    const wake = () => {
      controller.abort();
    };
    wakers.add(wake);
    await pause(pollMs, AbortSignal.any([controller.signal, signal]));
    wakers.delete(wake);
  }

  wake(queue: string): void {
    for (const wake of this.#wakers.get(queue) ?? []) wake();
  }

  wakeAll(): void {
    for (const wakers of this.#wakers.values()) for (const wake of wakers) wake();
  }
}
