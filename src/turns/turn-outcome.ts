import type { LoopOutcome } from '../loop/run-turn-loop.js';
import type { TurnFinish } from '../store/turn-record.js';
import type { CancelReason, TurnEventBody, TurnKind } from '../events/turn-events.js';

const CANCEL_MESSAGES: Record<CancelReason, string> = {
  client_disconnected: 'the client disconnected before the turn finished',
  cancel_requested: 'the turn was cancelled on request',
  timeout: 'the turn ran out of time',
  shutdown: 'the server shut down before the turn finished',
  superseded: 'a newer turn of the same agent interrupted this one',
};

/**
 * The one terminal event and final record for how the loop ended. Exactly one of
 * `turn.completed`, `turn.failed`, `turn.cancelled`.
 */
export function resolveTurnOutcome(options: {
  /** A parked loop has not ended: the driver parks the turn instead (src/approvals). */
  readonly outcome: Exclude<LoopOutcome, { readonly kind: 'parked' }>;
  readonly kind: TurnKind;
  readonly maxIterations: number;
  readonly cancelReason: CancelReason | undefined;
}): { event: TurnEventBody; finish: Omit<TurnFinish, 'finishedAt'> } {
  const { outcome } = options;
  const { iterations, usage } = outcome;
  switch (outcome.kind) {
    case 'answered':
      return {
        event: { type: 'turn.completed', output: outcome.text, iterations, usage, outcome: 'final_answer' },
        finish: { status: 'completed', iterations, usage, output: outcome.text, error: null, outcome: 'final_answer' },
      };
    case 'terminated': {
      const submitted = options.kind === 'workflow_task' && outcome.call.name === 'submit_result';
      if (submitted) {
        const result = outcome.result.details?.['result'];
        return {
          event: { type: 'turn.completed', output: outcome.text, result, iterations, usage, outcome: 'result_submitted' },
          finish: { status: 'completed', iterations, usage, output: outcome.text, result, error: null, outcome: 'result_submitted' },
        };
      }
      return {
        event: { type: 'turn.completed', output: outcome.text, iterations, usage, outcome: 'terminated' },
        finish: { status: 'completed', iterations, usage, output: outcome.text, error: null, outcome: 'terminated' },
      };
    }
    case 'iteration_exhausted': {
      const error = {
        code: 'max_iterations',
        message: `the model was still calling tools after ${options.maxIterations} iterations; it was asked for a summary instead`,
        reason: 'iteration_exhausted',
      };
      return {
        event: { type: 'turn.failed', error, output: outcome.text, iterations, usage },
        finish: { status: 'failed', iterations, usage, output: outcome.text, error, outcome: 'iteration_exhausted' },
      };
    }
    case 'failed':
      return {
        event: { type: 'turn.failed', error: outcome.error, ...(outcome.text === '' ? {} : { output: outcome.text }), iterations, usage },
        finish: { status: 'failed', iterations, usage, output: outcome.text === '' ? null : outcome.text, error: outcome.error, outcome: outcome.error.code },
      };
    case 'cancelled': {
      const reason = options.cancelReason ?? 'cancel_requested';
      const error = { code: 'cancelled', message: CANCEL_MESSAGES[reason], reason };
      return {
        event: { type: 'turn.cancelled', reason, iterations, usage },
        finish: { status: 'cancelled', iterations, usage, output: null, error, outcome: 'cancelled' },
      };
    }
  }
}

/**
 * The end of a turn whose events could not be stored: `turn.failed` with code `store_error`.
 * Keeps the counts and any output of the outcome it replaces.
 */
export function storeFailedOutcome(progress: Pick<TurnFinish, 'iterations' | 'usage' | 'output'>): { event: TurnEventBody; finish: Omit<TurnFinish, 'finishedAt'> } {
  const error = { code: 'store_error', message: 'the turn stopped because its events could not be stored' };
  const { iterations, usage, output } = progress;
  return {
    event: { type: 'turn.failed', error, ...(output === null ? {} : { output }), iterations, usage },
    finish: { status: 'failed', iterations, usage, output, error, outcome: 'store_error' },
  };
}
