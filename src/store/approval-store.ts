import type { PendingApproval, StoredEvent, TurnFinish } from './turn-record.js';

export type ApprovalDecision = 'approve' | 'deny';

/** One parked call as stored, with its decision once there is one. */
export interface StoredApproval extends PendingApproval {
  readonly turnId: string;
  /** Its position among the calls of its response. */
  readonly position: number;
  readonly iteration: number;
  readonly decision: ApprovalDecision | null;
  readonly message: string | null;
  readonly reason: 'timeout' | null;
  readonly decidedAt: string | null;
}

export type NewApproval = Omit<StoredApproval, 'decision' | 'message' | 'reason' | 'decidedAt'>;

/** What a decision came to. Only `decided` changed anything. */
export type DecideOutcome =
  | { readonly kind: 'turn_not_found' }
  | { readonly kind: 'approval_not_found' }
  | { readonly kind: 'not_pending'; readonly why: string }
  | { readonly kind: 'mismatch'; readonly expected: string }
  | {
      readonly kind: 'decided';
      readonly approval: StoredApproval;
      /** True when this was the last pending call: the turn is now `running`, owned by the decider, who must resume it. */
      readonly claimed: boolean;
    };

/** A claimed parked turn, read back to go on. */
export interface ClaimedContinuation {
  readonly continuationJson: string;
  /** Every approval the turn ever had. */
  readonly approvals: readonly StoredApproval[];
  /** Every event stored so far, in seq order: the resumed run numbers on after them. */
  readonly events: readonly StoredEvent[];
}

/**
 * Where parked turns and their approvals live, beside the turns (same database). Every change
 * to a parked turn — a decision, the claim that resumes it, a cancel, a timeout — happens in one
 * transaction that holds the turn's row, so two replicas can never both resume one turn, and
 * events added while nobody runs the turn take the next seq without a gap or a clash.
 */
export interface ApprovalStore {
  /** Stores the parking events, the parked calls and the continuation; the turn becomes `requires_action`. */
  park(options: {
    readonly turnId: string;
    readonly events: readonly StoredEvent[];
    readonly approvals: readonly NewApproval[];
    readonly continuationJson: string;
    readonly iterations: number;
    readonly usage: { readonly inputTokens: number; readonly outputTokens: number };
    readonly at: string;
  }): Promise<void>;
  /**
   * Records a decision on a pending call (and its `tool.approval_decided` event, built for the
   * seq it gets). `argumentsHash` undefined skips the hash check (a timeout decides, not a person).
   * When no call is left pending, claims the turn for `owner`.
   */
  decide(options: {
    readonly turnId: string;
    readonly callId: string;
    readonly decision: ApprovalDecision;
    readonly message: string | undefined;
    readonly reason: 'timeout' | undefined;
    readonly argumentsHash: string | undefined;
    readonly at: string;
    readonly owner: string;
    readonly event: (approval: StoredApproval, seq: number) => StoredEvent;
  }): Promise<DecideOutcome>;
  /** Ends a parked turn with the event built for its seq; false when it is not parked (any more). */
  cancelParked(options: { readonly turnId: string; readonly finish: TurnFinish; readonly event: (seq: number) => StoredEvent }): Promise<boolean>;
  /** Reads back a claimed turn's continuation and removes it; undefined when there is none. */
  takeContinuation(turnId: string): Promise<ClaimedContinuation | undefined>;
  listPending(turnId: string): Promise<PendingApproval[]>;
  /** Pending calls of parked turns whose wait ended at `now`, oldest first. */
  listExpired(options: { readonly now: string; readonly limit: number }): Promise<{ readonly turnId: string; readonly callId: string }[]>;
}
