import type { CancelReason } from '../events/turn-events.js';
import type { NewTurn, StoredEvent } from './turn-record.js';

/** What a turn that takes its agent does when the agent already has a turn running. */
export type AgentWaitMode = 'enqueue' | 'reject' | 'interrupt';

/** An `Idempotency-Key` as stored: its scope (who may replay it), the key, and the body it came with. */
export interface IdempotencyClaim {
  /** SHA-256 of the bearer token (hex), or `server` when auth is off. */
  readonly scope: string;
  readonly key: string;
  /** SHA-256 of the request body's canonical JSON (hex). */
  readonly bodyHash: string;
}

export interface AdmissionRequest {
  readonly turn: NewTurn;
  readonly idempotency?: IdempotencyClaim;
  /** How the turn takes its agent's lease; absent for turns that never do (workflow tasks, `concurrent`). */
  readonly agent?: { readonly mode: AgentWaitMode; readonly queueLimit: number };
  /**
   * The clock, read once the admission's transaction holds a connection: the turn's first
   * heartbeat. Under load that wait can outlast the orphan threshold, so a heartbeat of
   * `createdAt` would make a live turn look dead. Without it, `createdAt` is used.
   */
  readonly now?: () => string;
  /**
   * The turn's first event (`turn.started`, seq 1), stored in the same transaction when the
   * turn is admitted `running` (a `queued` turn starts later, after `turn.queued`): one commit
   * fewer per turn than storing it after the admission.
   */
  readonly startedEvent?: StoredEvent;
}

/**
 * How a new turn was admitted, decided atomically with its creation (one transaction that
 * serialises on the agent's queue row, so concurrent requests on any replica agree).
 */
export type Admission =
  /** Created and holding its agent (or needing none): start it now. */
  | { readonly kind: 'running' }
  /** Created as `queued`; `position` 1 runs next. `holderTurnId` is the turn running now. */
  | { readonly kind: 'queued'; readonly position: number; readonly holderTurnId: string | undefined }
  /** Not created: the agent is busy (`reject`) or its queue is full (`enqueue`). */
  | { readonly kind: 'busy'; readonly reason: 'running' | 'queue_full'; readonly queued: number }
  /** Not created: this key already made `turnId` with the same body. */
  | { readonly kind: 'replay'; readonly turnId: string }
  /** Not created: this key already made `turnId` with a different body. */
  | { readonly kind: 'key_reused'; readonly turnId: string };

export type Promotion = 'promoted' | 'waiting' | 'gone';

/** The store's part in coordinating replicas: admission, agent leases, idempotency keys, cancel requests. */
export interface CoordinationStore {
  /** Creates the turn unless idempotency or the agent's lease says otherwise (see Admission). */
  admitTurn(request: AdmissionRequest): Promise<Admission>;
  /**
   * Starts a queued turn if its agent is free and no queued turn is ahead of it: takes the
   * lease and sets the turn `running`. `gone` when the turn is no longer queued.
   */
  promoteQueuedTurn(options: { readonly turnId: string; readonly agentId: string; readonly owner: string; readonly now: string }): Promise<Promotion>;
  /** Gives the agent back, if this turn holds it. */
  releaseAgentLease(options: { readonly agentId: string; readonly turnId: string }): Promise<void>;
  findIdempotencyKey(options: { readonly scope: string; readonly key: string }): Promise<{ readonly turnId: string; readonly bodyHash: string } | undefined>;
  /** Forgets keys made before `before` (they are kept at least 24 h) and old cancel requests. */
  purgeCoordination(options: { readonly before: string }): Promise<void>;
  /** Asks the replica that runs the turn to cancel it; the first reason stays. */
  requestCancel(options: { readonly turnId: string; readonly reason: CancelReason; readonly at: string }): Promise<void>;
  /** The cancel requests among these turns. */
  listCancelRequests(turnIds: readonly string[]): Promise<{ readonly turnId: string; readonly reason: CancelReason }[]>;
}
