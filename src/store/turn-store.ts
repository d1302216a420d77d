import type { BrainStore } from '../brain/brain-store.js';
import type { ApprovalStore } from './approval-store.js';
import type { CoordinationStore } from './coordination-store.js';
import type { TodoStore } from './todo-store.js';
import type { NewTurn, StoredEvent, StoredTask, TurnFinish, TurnListQuery, TurnProgress, TurnRecord, TurnToolsRecord } from './turn-record.js';

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
  /** The turn's last stored event (its terminal one once it has ended): one indexed read, however many it has. */
  lastEvent(turnId: string): Promise<StoredEvent | undefined>;
  close(): Promise<void>;
}
