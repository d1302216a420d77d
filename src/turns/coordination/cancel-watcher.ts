import type { Logger } from 'pino';
import type { TurnStore } from '../../store/turn-store.js';
import type { TurnRun } from '../turn-run.js';
import type { TurnSignals } from './turn-signals.js';

/** How often the owner reads cancel requests for its turns, in case a signal was lost. */
const CANCEL_POLL_MS = 500;

/**
 * Cancels this process's turns when another replica stores a cancel request for them: at
 * once on the `cancel` signal, and by reading the requests for every local turn each
 * CANCEL_POLL_MS, so a lost NOTIFY costs at most that.
 */
export class CancelWatcher {
  readonly #store: TurnStore;
  readonly #logger: Logger;
  readonly #runs: ReadonlyMap<string, TurnRun>;
  readonly #unsubscribe: () => void;
  readonly #timer: NodeJS.Timeout;
  #polling = false;

  constructor(options: { readonly store: TurnStore; readonly signals: TurnSignals; readonly runs: ReadonlyMap<string, TurnRun>; readonly logger: Logger }) {
    this.#store = options.store;
    this.#logger = options.logger;
    this.#runs = options.runs;
    this.#unsubscribe = options.signals.subscribeAll('cancel', (turnId) => {
      if (this.#runs.has(turnId)) void this.#apply([turnId]);
    });
    this.#timer = setInterval(() => {
      if (this.#polling || this.#runs.size === 0) return;
      this.#polling = true;
      void this.#apply([...this.#runs.keys()]).finally(() => {
        this.#polling = false;
      });
    }, CANCEL_POLL_MS);
    this.#timer.unref();
  }

  stop(): void {
    this.#unsubscribe();
    clearInterval(this.#timer);
  }

  async #apply(turnIds: readonly string[]): Promise<void> {
    try {
      for (const request of await this.#store.listCancelRequests(turnIds)) this.#runs.get(request.turnId)?.cancel(request.reason);
    } catch (error) {
      this.#logger.warn({ err: error }, 'could not read cancel requests');
    }
  }
}
