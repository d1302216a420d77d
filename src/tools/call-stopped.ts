import type { CallOutcome } from '../events/turn-events.js';

/** What a tool may say of itself once its signal fired: it did nothing yet, or all it started has stopped. */
export type StoppedOutcome = Exclude<CallOutcome, 'maybe_ran'>;

/**
 * Thrown by a tool that stopped its own work at its own time limit (a command's `timeout_ms`),
 * so that the call is recorded as the timeout it is (`error.code` `timeout`), with how far it
 * got: `cancelled` when all it started is known to be gone, `maybe_ran` otherwise.
 */
export class CallTimedOutError extends Error {
  readonly outcome: Exclude<CallOutcome, 'not_started'>;

  constructor(message: string, outcome: Exclude<CallOutcome, 'not_started'>) {
    super(message);
    this.name = 'CallTimedOutError';
    this.outcome = outcome;
  }
}
