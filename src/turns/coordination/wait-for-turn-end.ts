import type { TurnStore } from '../../store/turn-store.js';
import type { TurnRecord } from '../../store/turn-record.js';
import { SignalWaiter } from './signal-waiter.js';
import type { TurnSignals } from './turn-signals.js';

/** How often the record is read again without a signal. */
const RECHECK_MS = 100;

/**
 * The turn's record once it has ended, or as it stands after `timeoutMs`; woken by the
 * turn's committed events (its terminal one among them). `undefined` for an unknown turn.
 */
export async function waitForTurnEnd(options: {
  readonly store: TurnStore;
  readonly signals: TurnSignals;
  readonly turnId: string;
  readonly timeoutMs: number;
}): Promise<TurnRecord | undefined> {
  const waiter = new SignalWaiter({ signals: options.signals, topic: 'events', id: options.turnId });
  const deadline = performance.now() + options.timeoutMs;
  try {
    for (;;) {
      const record = await options.store.getTurn(options.turnId);
      const remaining = deadline - performance.now();
      if (record === undefined || (record.status !== 'running' && record.status !== 'queued') || remaining <= 0) return record;
      await waiter.wait(Math.min(remaining, RECHECK_MS));
    }
  } finally {
    waiter.dispose();
  }
}
