import { PostgresAdapter, type Kysely, type Transaction } from 'kysely';
import type { JsonValue } from '../json.js';
import type { Database } from './database-schema.js';
import type { PendingApproval, StoredEvent } from './turn-record.js';
import type { TurnEvent } from '../events/turn-events.js';
import type { ApprovalStore, ClaimedContinuation, DecideOutcome, NewApproval, StoredApproval } from './approval-store.js';

/** The tables of src/store/migrations.ts '2026-12-01-approvals-001-parked-turns'. */
// A type, not an interface: Kysely's withTables wants an index-signature-compatible shape.
export type ApprovalTables = {
  turn_approvals: {
    turn_id: string;
    call_id: string;
    position: number;
    iteration: number;
    name: string;
    namespace: string | null;
    arguments_json: string;
    arguments_hash: string;
    label: string;
    requested_at: string;
    expires_at: string;
    decision: string | null;
    message: string | null;
    reason: string | null;
    decided_at: string | null;
  };
  turn_continuations: { turn_id: string; body: string; parked_at: string };
};

type ApprovalDatabase = Database & ApprovalTables;
type Db = Kysely<ApprovalDatabase> | Transaction<ApprovalDatabase>;
type ApprovalRow = ApprovalTables['turn_approvals'];

/** The approval store over the turn store's Kysely database, for SQLite and PostgreSQL alike. */
export class KyselyApprovalStore implements ApprovalStore {
  readonly #db: Kysely<ApprovalDatabase>;
  /** PostgreSQL is shared by replicas: a parked turn's row is locked for each change. SQLite has one writer anyway. */
  readonly #lockRows: boolean;

  constructor(db: Kysely<Database>) {
    this.#db = db.withTables<ApprovalTables>();
    this.#lockRows = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  async park(options: Parameters<ApprovalStore['park']>[0]): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      const parked = await trx
        .updateTable('turns')
        .set({
          status: 'requires_action',
          iterations: options.iterations,
          input_tokens: options.usage.inputTokens,
          output_tokens: options.usage.outputTokens,
          heartbeat_at: options.at,
        })
        .where('id', '=', options.turnId)
        .where('status', '=', 'running')
        .executeTakeFirst();
      if (parked.numUpdatedRows !== 1n) throw new Error(`turn "${options.turnId}" is no longer running; it cannot be parked`);
      await insertEvents(trx, options.turnId, options.events);
      await trx.deleteFrom('turn_continuations').where('turn_id', '=', options.turnId).execute();
      await trx.insertInto('turn_continuations').values({ turn_id: options.turnId, body: options.continuationJson, parked_at: options.at }).execute();
      if (options.approvals.length > 0) await trx.insertInto('turn_approvals').values(options.approvals.map(toRow)).execute();
    });
  }

  async decide(options: Parameters<ApprovalStore['decide']>[0]): Promise<DecideOutcome> {
    return this.#db.transaction().execute(async (trx): Promise<DecideOutcome> => {
      const turn = await this.#lockTurn(trx, options.turnId);
      if (turn === undefined) return { kind: 'turn_not_found' };
      const row = await trx.selectFrom('turn_approvals').selectAll().where('turn_id', '=', options.turnId).where('call_id', '=', options.callId).executeTakeFirst();
      if (row === undefined) return { kind: 'approval_not_found' };
      if (row.decision !== null) return { kind: 'not_pending', why: `it was already decided (${row.decision})` };
      if (turn.status !== 'requires_action') return { kind: 'not_pending', why: `the turn has ended (${turn.status})` };
      if (options.argumentsHash !== undefined && options.argumentsHash !== row.arguments_hash) return { kind: 'mismatch', expected: row.arguments_hash };
      await trx
        .updateTable('turn_approvals')
        .set({ decision: options.decision, message: options.message ?? null, reason: options.reason ?? null, decided_at: options.at })
        .where('turn_id', '=', options.turnId)
        .where('call_id', '=', options.callId)
        .execute();
      const approval = fromRow({ ...row, decision: options.decision, message: options.message ?? null, reason: options.reason ?? null, decided_at: options.at });
      await insertEvents(trx, options.turnId, [options.event(approval, (await lastSeq(trx, options.turnId)) + 1)]);
      const stillPending = await trx
        .selectFrom('turn_approvals')
        .select('call_id')
        .where('turn_id', '=', options.turnId)
        .where('decision', 'is', null)
        .limit(1)
        .executeTakeFirst();
      if (stillPending !== undefined) return { kind: 'decided', approval, claimed: false };
      await trx
        .updateTable('turns')
        .set({ status: 'running', owner: options.owner, heartbeat_at: options.at })
        .where('id', '=', options.turnId)
        .where('status', '=', 'requires_action')
        .execute();
      return { kind: 'decided', approval, claimed: true };
    });
  }

  async cancelParked(options: Parameters<ApprovalStore['cancelParked']>[0]): Promise<boolean> {
    const { finish } = options;
    return this.#db.transaction().execute(async (trx) => {
      const turn = await this.#lockTurn(trx, options.turnId);
      if (turn?.status !== 'requires_action') return false;
      await insertEvents(trx, options.turnId, [options.event((await lastSeq(trx, options.turnId)) + 1)]);
      await trx
        .updateTable('turns')
        .set({
          status: finish.status,
          finished_at: finish.finishedAt,
          iterations: finish.iterations,
          output: finish.output,
          error_json: finish.error === null ? null : JSON.stringify(finish.error),
          outcome: finish.outcome,
          input_tokens: finish.usage.inputTokens,
          output_tokens: finish.usage.outputTokens,
        })
        .where('id', '=', options.turnId)
        .execute();
      await trx.deleteFrom('turn_continuations').where('turn_id', '=', options.turnId).execute();
      return true;
    });
  }

  async takeContinuation(turnId: string): Promise<ClaimedContinuation | undefined> {
    return this.#db.transaction().execute(async (trx) => {
      const continuation = await trx.selectFrom('turn_continuations').select('body').where('turn_id', '=', turnId).executeTakeFirst();
      if (continuation === undefined) return undefined;
      const approvals = await trx.selectFrom('turn_approvals').selectAll().where('turn_id', '=', turnId).orderBy('requested_at').orderBy('position').execute();
      const events = await trx.selectFrom('turn_events').select(['seq', 'type', 'body']).where('turn_id', '=', turnId).orderBy('seq').execute();
      await trx.deleteFrom('turn_continuations').where('turn_id', '=', turnId).execute();
      return {
        continuationJson: continuation.body,
        approvals: approvals.map(fromRow),
        events: events.map((row) => ({ seq: row.seq, type: row.type as TurnEvent['type'], json: row.body })),
      };
    });
  }

  async listPending(turnId: string): Promise<PendingApproval[]> {
    const rows = await this.#db
      .selectFrom('turn_approvals')
      .selectAll()
      .where('turn_id', '=', turnId)
      .where('decision', 'is', null)
      .orderBy('requested_at')
      .orderBy('position')
      .execute();
    return rows.map((row) => toPending(fromRow(row)));
  }

  async listExpired(options: { now: string; limit: number }): Promise<{ turnId: string; callId: string }[]> {
    const rows = await this.#db
      .selectFrom('turn_approvals')
      .innerJoin('turns', 'turns.id', 'turn_approvals.turn_id')
      .select(['turn_approvals.turn_id as turnId', 'turn_approvals.call_id as callId'])
      .where('turn_approvals.decision', 'is', null)
      .where('turn_approvals.expires_at', '<=', options.now)
      .where('turns.status', '=', 'requires_action')
      .orderBy('turn_approvals.expires_at')
      .limit(options.limit)
      .execute();
    return rows;
  }

  async #lockTurn(trx: Transaction<ApprovalDatabase>, turnId: string): Promise<{ status: string } | undefined> {
    const query = trx.selectFrom('turns').select('status').where('id', '=', turnId);
    return (this.#lockRows ? query.forUpdate() : query).executeTakeFirst();
  }
}

/** A pending approval as the record shows it: no decision fields. */
export function toPending(approval: StoredApproval): PendingApproval {
  return {
    callId: approval.callId,
    name: approval.name,
    ...(approval.namespace === undefined ? {} : { namespace: approval.namespace }),
    arguments: approval.arguments,
    argumentsHash: approval.argumentsHash,
    label: approval.label,
    requestedAt: approval.requestedAt,
    expiresAt: approval.expiresAt,
  };
}

async function lastSeq(trx: Transaction<ApprovalDatabase>, turnId: string): Promise<number> {
  const row = await trx
    .selectFrom('turn_events')
    .select((eb) => eb.fn.coalesce(eb.fn.max('seq'), eb.lit(0)).as('seq'))
    .where('turn_id', '=', turnId)
    .executeTakeFirst();
  return row?.seq ?? 0;
}

async function insertEvents(db: Db, turnId: string, events: readonly StoredEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db
    .insertInto('turn_events')
    .values(events.map((event) => ({ turn_id: turnId, seq: event.seq, type: event.type, body: event.json })))
    .execute();
}

function toRow(approval: NewApproval): ApprovalRow {
  return {
    turn_id: approval.turnId,
    call_id: approval.callId,
    position: approval.position,
    iteration: approval.iteration,
    name: approval.name,
    namespace: approval.namespace ?? null,
    arguments_json: JSON.stringify(approval.arguments),
    arguments_hash: approval.argumentsHash,
    label: approval.label,
    requested_at: approval.requestedAt,
    expires_at: approval.expiresAt,
    decision: null,
    message: null,
    reason: null,
    decided_at: null,
  };
}

function fromRow(row: ApprovalRow): StoredApproval {
  return {
    turnId: row.turn_id,
    callId: row.call_id,
    position: row.position,
    iteration: row.iteration,
    name: row.name,
    ...(row.namespace === null ? {} : { namespace: row.namespace }),
    arguments: JSON.parse(row.arguments_json) as JsonValue,
    argumentsHash: row.arguments_hash,
    label: row.label,
    requestedAt: row.requested_at,
    expiresAt: row.expires_at,
    decision: row.decision === 'approve' || row.decision === 'deny' ? row.decision : null,
    message: row.message,
    reason: row.reason === 'timeout' ? 'timeout' : null,
    decidedAt: row.decided_at,
  };
}
