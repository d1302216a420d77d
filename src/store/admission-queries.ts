import { sql } from 'kysely';
import type { TurnsTable } from './database-schema.js';
import { PreparedQuery } from './prepared-query.js';

/**
 * A lease is held while its turn has not ended: `running`, and any state a running turn may
 * pass through (a turn parked for approval still holds its agent).
 */
export const ENDED_STATUSES = ['completed', 'failed', 'cancelled', 'interrupted'];

/**
 * The statements of a turn's admission, which every turn runs in one transaction: compiled once
 * per store (see PreparedQuery), the same SQL on SQLite and PostgreSQL.
 */
export class AdmissionQueries {
  /** Bumps the agent's queue counter, returning the new value; on PostgreSQL this locks the row until commit. */
  readonly bumpQueue = new PreparedQuery((db, values: { agentId: string }) =>
    db
      .insertInto('agent_queues')
      .values({ agent_id: values.agentId, next_seq: 1 })
      .onConflict((conflict) => conflict.column('agent_id').doUpdateSet({ next_seq: sql<number>`agent_queues.next_seq + 1` }))
      .returning('next_seq'),
  );

  /** The agent's lease, with the status of the turn holding it (null when that turn is gone). */
  readonly lease = new PreparedQuery((db, values: { agentId: string }) =>
    db
      .selectFrom('agent_leases')
      .leftJoin('turns', 'turns.id', 'agent_leases.turn_id')
      .select(['agent_leases.turn_id as turn_id', 'turns.status as status'])
      .where('agent_leases.agent_id', '=', values.agentId),
  );

  readonly takeLease = new PreparedQuery((db, values: { agentId: string; turnId: string; owner: string; takenAt: string }) =>
    db.insertInto('agent_leases').values({ agent_id: values.agentId, turn_id: values.turnId, owner: values.owner, taken_at: values.takenAt }),
  );

  /** Turns of the agent queued before (priority, seq). */
  readonly queuedAhead = new PreparedQuery((db, values: { agentId: string; priority: number; seq: number }) =>
    db
      .selectFrom('turns')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('agent_id', '=', values.agentId)
      .where('status', '=', 'queued')
      .where((eb) => eb.or([eb('queue_priority', '<', values.priority), eb.and([eb('queue_priority', '=', values.priority), eb('queue_seq', '<', values.seq)])])),
  );

  readonly insertTurn = new PreparedQuery((db, values: TurnsTable) => db.insertInto('turns').values({ ...values }));

  readonly insertTurnTools = new PreparedQuery((db, values: { turnId: string; toolsHash: string; unavailableJson: string }) =>
    db.insertInto('turn_tools').values({ turn_id: values.turnId, tools_hash: values.toolsHash, unavailable_json: values.unavailableJson }),
  );

  readonly insertProviderTools = new PreparedQuery((db, values: { turnId: string; iteration: number; toolsHash: string }) =>
    db.insertInto('turn_provider_tools').values({ turn_id: values.turnId, iteration: values.iteration, tools_hash: values.toolsHash }),
  );

  readonly insertEvent = new PreparedQuery((db, values: { turnId: string; seq: number; type: string; body: string }) =>
    db.insertInto('turn_events').values({ turn_id: values.turnId, seq: values.seq, type: values.type, body: values.body }),
  );
}
