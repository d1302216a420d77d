import type { Clock } from '../../clock.js';
import type { TurnStore } from '../../store/turn-store.js';
import { SignalWaiter } from './signal-waiter.js';
import type { TurnSignals } from './turn-signals.js';

/**
 * How often a queued turn looks again without a signal: the signal of a lease given back on
 * another replica may be lost, and a lease whose holder died is freed by the orphan sweep,
 * which signals nothing.
 */
const QUEUE_POLL_MS = 1_000;

/**
 * Waits until a queued turn holds its agent: true once it does, false when `signal` aborts
 * first (the turn was cancelled while queued) or the turn is no longer queued.
 */
export async function waitForAgent(options: {
  readonly store: TurnStore;
  readonly signals: TurnSignals;
  readonly clock: Clock;
  readonly turnId: string;
  readonly agentId: string;
  readonly owner: string;
  readonly signal: AbortSignal;
}): Promise<boolean> {
  const { store, signal } = options;
  const waiter = new SignalWaiter({ signals: options.signals, topic: 'agent', id: options.agentId });
  try {
    while (!signal.aborted) {
      const promotion = await store.promoteQueuedTurn({ turnId: options.turnId, agentId: options.agentId, owner: options.owner, now: options.clock.now().toISOString() });
      if (promotion === 'promoted') {
        // Cancelled in the instant it was promoted: it holds the agent, so it starts and ends at once.
        return true;
      }
      if (promotion === 'gone') return false;
      await waiter.wait(QUEUE_POLL_MS, signal);
    }
    return false;
  } finally {
    waiter.dispose();
  }
}
