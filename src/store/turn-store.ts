import type { BrainStore } from '../brain/brain-store.js';
import type { ApprovalStore, PendingApproval } from './approval-store.js';
import type { JsonObject } from '../json.js';
import type { CoordinationStore } from './coordination-store.js';
import type { TodoStore } from './todo-store.js';
import type { TurnError, TurnEvent, TurnKind, TurnUsage } from '../events/turn-events.js';

export type TurnStatus = 'queued' | 'running' | 'requires_action' | 'completed' | 'failed' | 'cancelled' | 'interrupted';

/** A turn as `GET /turns/:id` shows it. */
export interface TurnRecord {
  readonly id: string;
  readonly agentId: string;
  readonly kind: TurnKind;
  readonly status: TurnStatus;
  readonly model: string;
  readonly createdAt: string;
  readonly finishedAt: string | null;
  readonly iterations: number;
  readonly output: string | null;
  /** The accepted result of a workflow task; absent otherwise. */
  readonly result?: unknown;
  readonly error: TurnError | null;
  readonly outcome: string | null;
  readonly usage: TurnUsage;
  /** When the turn was put in its agent's queue; absent when it never waited. */
  readonly queuedAt?: string;
  /** The calls waiting for a person, while `status` is `requires_action`. */
  readonly pendingApprovals?: PendingApproval[];
  /** The schedule whose fire started this turn. */
  readonly scheduleId?: string;
  /** The background job this turn is a step of. */
  readonly backgroundJobId?: string;
}

/** What a turn was given, as `GET /turns/:id/tools` shows it. */
export interface TurnToolsRecord {
  readonly turnId: string;
  readonly kind: TurnKind;
  /** The JSON text of the assembled tool snapshot (an array). */
  readonly toolsJson: string;
  /** The JSON text of the sources that contributed no tool (`[{source, reason}]`). */
  readonly unavailableJson: string;
  /** The provider tool lists, as the exact JSON text sent, for each iteration where it changed. */
  readonly providerTools: readonly { readonly iteration: number; readonly json: string }[];
}

/** An event as stored: its JSON text is served as is. */
export interface StoredEvent {
  readonly seq: number;
  readonly type: TurnEvent['type'];
  readonly json: string;
}

/** A workflow task as it was accepted: its result is checked against this before it is written. */
export interface StoredTask {
  readonly instructions: string;
  readonly resultSchema: JsonObject;
}

export interface NewTurn {
  readonly record: TurnRecord;
  readonly task?: StoredTask;
  readonly owner: string;
  readonly toolsJson: string;
  readonly unavailableJson: string;
  readonly providerToolsJson: string;
}

/** Which turns `listTurns` answers. */
export interface TurnListQuery {
  readonly agentId?: string | undefined;
  readonly status?: TurnStatus | undefined;
  readonly limit: number;
}

/** How a turn ended: the record's closing fields. */
export type TurnFinish = Pick<TurnRecord, 'iterations' | 'output' | 'result' | 'error' | 'outcome' | 'usage'> & {
  readonly status: Exclude<TurnStatus, 'running' | 'queued' | 'requires_action'>;
  readonly finishedAt: string;
};

/** How far a running turn has got: kept in its record as it goes, so an interrupted turn keeps them. */
export interface TurnProgress {
  readonly iterations: number;
  readonly usage: TurnUsage;
}

/**
 * Where turns live: the record, every event in order, what the turn was given, and each
 * agent's todo list. SQLite on one machine, PostgreSQL when replicas share it.
 */
export interface TurnStore extends TodoStore, CoordinationStore {
  /** Each agent's Brain pages, in the same database. */
  readonly brain: BrainStore;
  /** Parked turns and their approvals (src/approvals). */
  readonly approvals: ApprovalStore;
  createTurn(turn: NewTurn): Promise<void>;
  /**
   * Appends events (in seq order) in one transaction, however many there are; with
   * `progress`, the running turn's iterations and usage are written in the same transaction
   * (one commit where two would cost twice the log writes).
   */
  appendEvents(turnId: string, events: readonly StoredEvent[], progress?: TurnProgress): Promise<void>;
  /** Writes a running turn's iterations and usage into its record (no-op once it has ended). */
  recordProgress(turnId: string, progress: TurnProgress): Promise<void>;
  /**
   * Appends the last events and closes the record, atomically. With `releaseAgent`, the turn
   * also gives that agent's lease back (if it holds it) in the same transaction: one commit
   * fewer per turn than `releaseAgentLease` after it.
   */
  finishTurn(turnId: string, events: readonly StoredEvent[], finish: TurnFinish, options?: { readonly releaseAgent?: string }): Promise<void>;
  recordProviderTools(turnId: string, iteration: number, json: string): Promise<void>;
  /** Marks these turns as alive, if they are still queued or running; returns the ids it marked. */
  heartbeat(turnIds: readonly string[], at: string): Promise<string[]>;
  /**
   * Ends turns left `running` or `queued` by a process that is gone: those of `owner` (this
   * process's previous life, at start only) and those whose heartbeat is older than `staleBefore`. Each gets a
   * terminal `turn.failed` event with code `interrupted`. Returns their ids.
   */
  interruptOrphans(options: { readonly owner?: string; readonly staleBefore: string; readonly now: string }): Promise<string[]>;
  getTurn(turnId: string): Promise<TurnRecord | undefined>;
  /** Turns, newest first. */
  listTurns(options: TurnListQuery): Promise<TurnRecord[]>;
  getTask(turnId: string): Promise<StoredTask | undefined>;
  getTurnTools(turnId: string): Promise<TurnToolsRecord | undefined>;
  listEvents(turnId: string, options: { readonly afterSeq: number; readonly limit: number }): Promise<StoredEvent[]>;
  close(): Promise<void>;
}
