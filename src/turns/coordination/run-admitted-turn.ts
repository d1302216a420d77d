import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { TurnStore } from '../../store/turn-store.js';
import { resolveTurnOutcome } from '../turn-outcome.js';
import type { TurnRun } from '../turn-run.js';
import type { TurnSignals } from './turn-signals.js';
import { waitForAgent } from './wait-for-agent.js';

/**
 * Runs an admitted turn to its end: waits for its agent when it was queued (a turn
 * cancelled meanwhile ends with `turn.cancelled` and never starts), starts it, and at the end
 * gives the agent back and wakes whoever waits for it, on any replica. Never rejects.
 */
export async function runAdmittedTurn(options: {
  readonly run: TurnRun;
  readonly queued: boolean;
  readonly takesAgent: boolean;
  /** Emits `turn.started` and drives the loop to the terminal event. */
  readonly start: () => Promise<void>;
  /** Called once the turn no longer waits (started or not). */
  readonly onLeftQueue: () => void;
  readonly store: TurnStore;
  readonly signals: TurnSignals;
  readonly clock: Clock;
  readonly owner: string;
  readonly logger: Logger;
}): Promise<void> {
  const { run, logger, store, signals } = options;
  try {
    const holdsAgent =
      !options.queued || (await waitForAgent({ store, signals, clock: options.clock, turnId: run.id, agentId: run.agentId, owner: options.owner, signal: run.signal }));
    options.onLeftQueue();
    if (holdsAgent) await options.start();
    else {
      const terminal = resolveTurnOutcome({ outcome: { kind: 'cancelled', iterations: 0, usage: { inputTokens: 0, outputTokens: 0 } }, kind: run.kind, maxIterations: 0, cancelReason: run.cancelReason });
      await run.finish(terminal.event, terminal.finish);
    }
  } catch (error) {
    logger.error({ err: error }, 'a turn could not be finished');
  } finally {
    options.onLeftQueue();
    if (options.takesAgent) {
      // Usually the stored end of the turn gave it back already; a parked turn, or one whose end could not be stored, gives it back here.
      if (!run.agentReleased) {
        await store.releaseAgentLease({ agentId: run.agentId, turnId: run.id }).catch((error: unknown) => {
          logger.error({ err: error }, 'could not give the agent back; the next turn takes it over');
        });
      }
      await signals.publish('agent', run.agentId);
    }
  }
}
