import type { SignalTopic, TurnSignals } from './turn-signals.js';

/**
 * Waits for the next signal on one topic and id, or for `pollMs`, whichever is first. It
 * listens from the moment it is made, so a signal that arrives while the caller is busy
 * reading the store is not lost: the next `wait` returns at once.
 */
export class SignalWaiter {
  readonly #unsubscribe: () => void;
  #signalled = false;
  #wake: (() => void) | undefined;

  constructor(options: { readonly signals: TurnSignals; readonly topic: SignalTopic; readonly id: string }) {
    this.#unsubscribe = options.signals.subscribe(options.topic, options.id, () => {
      this.#signalled = true;
      this.#wake?.();
    });
  }

  /** Resolves on a signal (one seen since the last wait counts), after `pollMs`, or when `abort` fires. Never rejects. */
  wait(pollMs: number, abort?: AbortSignal): Promise<void> {
    if (this.#signalled || abort?.aborted === true) {
      this.#signalled = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        abort?.removeEventListener('abort', finish);
        this.#wake = undefined;
        this.#signalled = false;
        resolve();
      };
      const timer = setTimeout(finish, pollMs);
      timer.unref();
      abort?.addEventListener('abort', finish, { once: true });
      this.#wake = finish;
    });
  }

  dispose(): void {
    this.#unsubscribe();
    this.#wake?.();
  }
}
