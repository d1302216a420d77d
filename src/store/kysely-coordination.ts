import type { Kysely } from 'kysely';
import type { CancelReason } from '../events/turn-events.js';
import type { Admission, AdmissionRequest, Promotion } from './coordination-store.js';
import type { Database } from './database-schema.js';
import { ENDED_STATUSES, type AdmissionQueries } from './admission-queries.js';
import { insertNewTurn } from './insert-new-turn.js';
import type { SavedToolSets } from './saved-tool-sets.js';

/**
 * Runs `work` as one transaction: Kysely's own on PostgreSQL; on SQLite, a savepoint of the next
 * group commit (SqliteWriteGroup.transact), so that a turn's admission shares a commit with the
 * other writes of its moment instead of paying one of its own.
 */
export type Transact = <T>(work: (trx: Kysely<Database>) => Promise<T>) => Promise<T>;

/** Queue priorities: an `interrupt` turn runs before turns that were merely enqueued. */
const INTERRUPT_PRIORITY = 0;
const ENQUEUE_PRIORITY = 1;
/** Carries a decision out of a transaction that must not commit. */
class RolledBack extends Error {
  readonly admission: Admission;
  constructor(admission: Admission) {
    super('admission rolled back');
    this.admission = admission;
  }
}

/**
 * Creates a turn in one transaction with what decides whether it may exist: its idempotency
 * key (a primary key, so of N concurrent identical requests on any replicas exactly one
 * inserts; PostgreSQL makes the others wait for it and then see its row) and its agent's
 * lease (the agent's queue row is bumped first, which locks it on PostgreSQL, so admissions
 * of one agent are serialised and the queue limit holds).
 */
export async function admitTurn(transact: Transact, request: AdmissionRequest, savedToolSets: SavedToolSets, queries: AdmissionQueries): Promise<Admission> {
  const toolSets = savedToolSets.writer();
  try {
    const admission = await transact(async (trx): Promise<Admission> => {
      const { turn, idempotency, agent } = request;
      const heartbeatAt = request.now?.() ?? turn.record.createdAt;
      const startRunning = async (): Promise<Admission> => {
        await insertNewTurn(trx, turn, toolSets, queries, { status: 'running', heartbeatAt });
        const started = request.startedEvent;
        if (started !== undefined) await queries.insertEvent.run(trx, { turnId: turn.record.id, seq: started.seq, type: started.type, body: started.json });
        return { kind: 'running' };
      };
      if (idempotency !== undefined) {
        const claimed = await trx
          .insertInto('idempotency_keys')
          .values({ scope: idempotency.scope, key: idempotency.key, body_hash: idempotency.bodyHash, turn_id: turn.record.id, created_at: turn.record.createdAt })
          .onConflict((conflict) => conflict.columns(['scope', 'key']).doNothing())
          .returning('turn_id')
          .executeTakeFirst();
        if (claimed === undefined) {
          const existing = await trx
            .selectFrom('idempotency_keys')
            .select(['turn_id', 'body_hash'])
            .where('scope', '=', idempotency.scope)
            .where('key', '=', idempotency.key)
            .executeTakeFirstOrThrow();
          throw new RolledBack(existing.body_hash === idempotency.bodyHash ? { kind: 'replay', turnId: existing.turn_id } : { kind: 'key_reused', turnId: existing.turn_id });
        }
      }
      if (agent === undefined) return startRunning();
      const agentId = turn.record.agentId;
      const seq = await bumpQueue(trx, queries, agentId);
      const priority = agent.mode === 'interrupt' ? INTERRUPT_PRIORITY : ENQUEUE_PRIORITY;
      const holder = await leaseHolder(trx, queries, agentId);
      const ahead = await queuedAhead(trx, queries, { agentId, priority, seq });
      if (holder === undefined && ahead === 0) {
        await queries.takeLease.run(trx, { agentId, turnId: turn.record.id, owner: turn.owner, takenAt: turn.record.createdAt });
        return startRunning();
      }
      const queued = await countQueued(trx, agentId);
      if (agent.mode === 'reject') throw new RolledBack({ kind: 'busy', reason: 'running', queued });
      if (agent.mode === 'enqueue' && queued >= agent.queueLimit) throw new RolledBack({ kind: 'busy', reason: 'queue_full', queued });
      await insertNewTurn(trx, turn, toolSets, queries, { status: 'queued', priority, seq, heartbeatAt });
      return { kind: 'queued', position: ahead + 1, holderTurnId: holder };
    });
    toolSets.committed();
    return admission;
  } catch (error) {
    if (error instanceof RolledBack) return error.admission;
    throw error;
  }
}

export async function promoteQueuedTurn(db: Kysely<Database>, options: { turnId: string; agentId: string; owner: string; now: string }, queries: AdmissionQueries): Promise<Promotion> {
  // A cheap read first: most wake-ups find the agent still busy, and need not lock anything.
  const busy = await db
    .selectFrom('agent_leases')
    .innerJoin('turns', 'turns.id', 'agent_leases.turn_id')
    .select('agent_leases.turn_id')
    .where('agent_leases.agent_id', '=', options.agentId)
    .where('turns.status', 'not in', ENDED_STATUSES)
    .executeTakeFirst();
  if (busy !== undefined && busy.turn_id !== options.turnId) return 'waiting';
  return db.transaction().execute(async (trx): Promise<Promotion> => {
    await bumpQueue(trx, queries, options.agentId);
    const turn = await trx.selectFrom('turns').select(['status', 'queue_priority', 'queue_seq']).where('id', '=', options.turnId).executeTakeFirst();
    if (turn?.status !== 'queued') return 'gone';
    if ((await leaseHolder(trx, queries, options.agentId)) !== undefined) return 'waiting';
    const ahead = await queuedAhead(trx, queries, { agentId: options.agentId, priority: turn.queue_priority ?? ENQUEUE_PRIORITY, seq: turn.queue_seq ?? 0 });
    if (ahead > 0) return 'waiting';
    await queries.takeLease.run(trx, { agentId: options.agentId, turnId: options.turnId, owner: options.owner, takenAt: options.now });
    await trx.updateTable('turns').set({ status: 'running', heartbeat_at: options.now }).where('id', '=', options.turnId).execute();
    return 'promoted';
  });
}

export async function releaseAgentLease(db: Kysely<Database>, options: { agentId: string; turnId: string }): Promise<void> {
  await db.deleteFrom('agent_leases').where('agent_id', '=', options.agentId).where('turn_id', '=', options.turnId).execute();
}

export async function findIdempotencyKey(db: Kysely<Database>, options: { scope: string; key: string }): Promise<{ turnId: string; bodyHash: string } | undefined> {
  const row = await db.selectFrom('idempotency_keys').select(['turn_id', 'body_hash']).where('scope', '=', options.scope).where('key', '=', options.key).executeTakeFirst();
  return row === undefined ? undefined : { turnId: row.turn_id, bodyHash: row.body_hash };
}

export async function purgeCoordination(db: Kysely<Database>, options: { before: string }): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('created_at', '<', options.before).execute();
  await db.deleteFrom('creation_keys').where('created_at', '<', options.before).execute();
  await db.deleteFrom('turn_cancel_requests').where('requested_at', '<', options.before).execute();
}

export async function requestCancel(db: Kysely<Database>, options: { turnId: string; reason: CancelReason; at: string }): Promise<void> {
  await db
    .insertInto('turn_cancel_requests')
    .values({ turn_id: options.turnId, reason: options.reason, requested_at: options.at })
    .onConflict((conflict) => conflict.column('turn_id').doNothing())
    .execute();
}

export async function listCancelRequests(db: Kysely<Database>, turnIds: readonly string[]): Promise<{ turnId: string; reason: CancelReason }[]> {
  if (turnIds.length === 0) return [];
  const rows = await db.selectFrom('turn_cancel_requests').select(['turn_id', 'reason']).where('turn_id', 'in', [...turnIds]).execute();
  return rows.map((row) => ({ turnId: row.turn_id, reason: row.reason as CancelReason }));
}

/** Bumps the agent's queue counter and returns the new value; on PostgreSQL this locks the row until commit. */
async function bumpQueue(trx: Kysely<Database>, queries: AdmissionQueries, agentId: string): Promise<number> {
  const row = await queries.bumpQueue.first(trx, { agentId });
  if (row === undefined) throw new Error(`the queue counter of agent ${agentId} was not returned`);
  return row.next_seq;
}

/** The turn holding the agent, if it is still running; a lease left by a turn that ended is dropped. */
async function leaseHolder(trx: Kysely<Database>, queries: AdmissionQueries, agentId: string): Promise<string | undefined> {
  const lease = await queries.lease.first(trx, { agentId });
  if (lease === undefined) return undefined;
  if (lease.status !== null && !ENDED_STATUSES.includes(lease.status)) return lease.turn_id;
  // Its turn ended without giving the agent back (its process died and was swept): take it over.
  await trx.deleteFrom('agent_leases').where('agent_id', '=', agentId).execute();
  return undefined;
}

async function queuedAhead(trx: Kysely<Database>, queries: AdmissionQueries, options: { agentId: string; priority: number; seq: number }): Promise<number> {
  const row = await queries.queuedAhead.first(trx, options);
  return Number(row?.count ?? 0);
}

async function countQueued(trx: Kysely<Database>, agentId: string): Promise<number> {
  const row = await trx
    .selectFrom('turns')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('agent_id', '=', agentId)
    .where('status', '=', 'queued')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
