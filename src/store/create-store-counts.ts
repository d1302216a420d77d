import type { Kysely } from 'kysely';
import type { ApprovalTables } from './kysely-approval-store.js';
import type { Database } from './database-schema.js';
import type { StoreCounts } from '../observability/service-metrics.js';

/**
 * The scrape-time counts of `GET /metrics`, straight from the store, so they are right after a
 * restart and, on a shared PostgreSQL, across replicas. Both are indexed: `turns(status, …)`
 * and `turn_approvals(decision, expires_at)`. A call of a parked turn that was cancelled keeps
 * its undecided row, so only turns still `requires_action` count.
 */
export function createStoreCounts(options: { readonly db: Kysely<Database> }): StoreCounts {
  const db = options.db.withTables<ApprovalTables>();
  return {
    approvalsWaiting: async () => {
      const row = await db
        .selectFrom('turn_approvals')
        .innerJoin('turns', 'turns.id', 'turn_approvals.turn_id')
        .select((eb) => eb.fn.countAll<string | number | bigint>().as('count'))
        .where('turn_approvals.decision', 'is', null)
        .where('turns.status', '=', 'requires_action')
        .executeTakeFirst();
      return Number(row?.count ?? 0);
    },
    turnsQueued: async () => {
      const row = await db
        .selectFrom('turns')
        .select((eb) => eb.fn.countAll<string | number | bigint>().as('count'))
        .where('status', '=', 'queued')
        .executeTakeFirst();
      return Number(row?.count ?? 0);
    },
  };
}
