import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { TurnStore } from '../../store/turn-store.js';
import type { TurnRun } from '../turn-run.js';
import { IDEMPOTENCY_KEY_TTL_MS } from './idempotency-key.js';
import { runEvery } from '../../concurrency/run-every.js';

/**
 * Liveness across replicas: each process refreshes its turns every HEARTBEAT_MS; another
 * process ends a turn whose heartbeat is ORPHAN_AFTER_MS old, looking every SWEEP_MS. So a
 * dead replica's turns end `interrupted` within ORPHAN_AFTER_MS + HEARTBEAT_MS + SWEEP_MS
 * (14 s) of its death, while a replica has to miss five heartbeats in a row to be presumed dead.
 */
const HEARTBEAT_MS = 2_000;
const ORPHAN_AFTER_MS = 10_000;
const SWEEP_MS = 2_000;
/** A single process (SQLite) has nobody to prove its liveness to: it sweeps its own turns at start only. */
const LOCAL_HEARTBEAT_MS = 15_000;
const PURGE_MS = 10 * 60_000;

/**
 * The timers that keep the store's view of running turns true: this process's heartbeat, the
 * sweep that ends dead replicas' turns, and the purge of expired idempotency keys.
 */
export class TurnLiveness {
  readonly #store: TurnStore;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #instanceId: string;
  readonly #runs: ReadonlyMap<string, TurnRun>;
  readonly #timers: NodeJS.Timeout[] = [];

  private constructor(options: TurnLivenessOptions) {
    this.#store = options.store;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#instanceId = options.instanceId;
    this.#runs = options.runs;
  }

  /** Interrupts turns a dead process left (this one's previous life included), then starts the timers. */
  static async start(options: TurnLivenessOptions): Promise<TurnLiveness> {
    const liveness = new TurnLiveness(options);
    // At start, this process's own turns are a previous life's, whatever their heartbeat says.
    await liveness.#sweep({ ageMs: options.sharedStore ? ORPHAN_AFTER_MS : 0, includeOwn: true });
    liveness.#every(options.sharedStore ? HEARTBEAT_MS : LOCAL_HEARTBEAT_MS, 'turn heartbeat', () => liveness.#heartbeat());
    if (options.sharedStore) liveness.#every(SWEEP_MS, 'orphan sweep', () => liveness.#sweep({ ageMs: ORPHAN_AFTER_MS, includeOwn: false }));
    liveness.#every(PURGE_MS, 'idempotency key purge', () =>
      options.store.purgeCoordination({ before: new Date(options.clock.now().getTime() - IDEMPOTENCY_KEY_TTL_MS).toISOString() }),
    );
    return liveness;
  }

  stop(): void {
    for (const timer of this.#timers) clearInterval(timer);
  }

  /**
   * Proves this process's turns alive. A turn the store no longer holds as live was ended by
   * another replica that presumed this one dead (it missed its heartbeats): nothing it does
   * now can be stored, so it stops, and its tools with it.
   */
  async #heartbeat(): Promise<void> {
    const runs = [...this.#runs.values()];
    if (runs.length === 0) return;
    const alive = new Set(await this.#store.heartbeat(runs.map((run) => run.id), this.#clock.now().toISOString()));
    for (const run of runs) {
      if (alive.has(run.id) || run.finished) continue;
      this.#logger.error({ turnId: run.id }, 'another replica ended this turn while it ran here (its heartbeats were late); stopping it');
      run.cancel('shutdown');
    }
  }

  async #sweep(options: { ageMs: number; includeOwn: boolean }): Promise<void> {
    const now = this.#clock.now();
    const interrupted = await this.#store.interruptOrphans({
      ...(options.includeOwn ? { owner: this.#instanceId } : {}),
      staleBefore: new Date(now.getTime() - options.ageMs).toISOString(),
      now: now.toISOString(),
    });
    if (interrupted.length > 0) this.#logger.warn({ turns: interrupted }, 'turns left running by a stopped process were marked interrupted');
  }

  #every(intervalMs: number, what: string, task: () => Promise<unknown>): void {
    this.#timers.push(runEvery({ intervalMs, what, task, logger: this.#logger }));
  }
}

export interface TurnLivenessOptions {
  readonly store: TurnStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Names this process in the store. */
  readonly instanceId: string;
  /** True when other replicas share the store. */
  readonly sharedStore: boolean;
  /** The turns of this process, queued or running. */
  readonly runs: ReadonlyMap<string, TurnRun>;
}
