import type { JsonObject, JsonValue } from '../json.js';
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
  /** The turn's webhook: stored with it, and sent once it has ended (see TurnWebhooksTable). */
  readonly webhookUrl?: string;
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

/** A call waiting for a person, as the turn record's `pendingApprovals` shows it. */
export interface PendingApproval {
  readonly callId: string;
  readonly name: string;
  readonly namespace?: string;
  readonly arguments: JsonValue;
  readonly argumentsHash: string;
  readonly label: string;
  readonly requestedAt: string;
  readonly expiresAt: string;
}
