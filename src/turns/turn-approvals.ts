import type { CallGate } from '../loop/call-gate.js';
import type { LoopOutcome } from '../loop/run-turn-loop.js';
import type { TurnRecord } from '../store/turn-record.js';
import type { TurnRequest } from './turn-request.js';
import type { TurnRun } from './turn-run.js';

/** A loop that stopped at calls waiting for a person, with what it takes to go on later. */
export interface ParkedLoop {
  readonly outcome: Extract<LoopOutcome, { readonly kind: 'parked' }>;
  /** How many responses the model gave (the scripted model resumes at the next step). */
  readonly modelSteps: number | undefined;
  readonly maxIterations: number;
  /** What is left of the turn's time limit, which counts running time only. */
  readonly remainingMs: number;
}

/** Approvals for a turn: the gate that parks calls, and where a parked loop is stored. */
export interface TurnApprovals {
  readonly gate: CallGate;
  /** Stores the parked turn and suspends its run; throws when it could not be stored. */
  park(parked: ParkedLoop): Promise<void>;
}

/**
 * Approvals as the turn service asks for them. The turn core defines this and never imports
 * the implementation (src/approvals/approval-service.ts); runtime.ts plugs it in.
 */
export interface TurnApprovalsProvider {
  /** The gate and the parking for a new turn; undefined when its policy lets everything run. */
  forTurn(options: { readonly run: TurnRun; readonly request: TurnRequest }): TurnApprovals | undefined;
  /** Cancels a parked turn in the store: its final record, or undefined when it is not parked. */
  cancelParked(options: { readonly record: TurnRecord }): Promise<TurnRecord | undefined>;
}

/** A parked turn set up again after its last decision, for the turn service to keep (`TurnService.adopt`). */
export interface ResumedTurn {
  readonly run: TurnRun;
  /** Settles when the turn has ended or parked again. */
  readonly driving: Promise<void>;
  /** The turn request's webhook, sent when the resumed run ends the turn. */
  readonly webhookUrl?: string;
}
