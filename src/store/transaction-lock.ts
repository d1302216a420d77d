import { PostgresAdapter, sql, type Kysely, type Transaction } from 'kysely';

/**
 * Makes the transactions that take the same `name` run one after another from here to their
 * end, for a check-then-write no row lock covers (counting rows of several parents, say). On
 * PostgreSQL a transaction-level advisory lock on the name's hash (a rare hash collision only
 * serialises two names more than needed); SQLite already writes one transaction at a time.
 */
export async function lockForTransaction<Tables>(trx: Transaction<Tables>, name: string): Promise<void> {
  if (!isPostgres(trx)) return;
  await sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`.execute(trx);
}

function isPostgres<Tables>(db: Kysely<Tables>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
