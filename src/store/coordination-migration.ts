import { PostgresAdapter, sql, type Kysely, type Migration } from 'kysely';

/** The channel every replica LISTENs on; payloads are `<topic>:<id>` (see turn-signals.ts). */
export const SIGNAL_CHANNEL = 'turn_runtime';

/**
 * What replicas need to coordinate through the store: queued turns, one lease per agent,
 * idempotency keys, cancel requests for turns another replica runs, and (PostgreSQL only) a
 * trigger that NOTIFYs whenever a turn's events are committed, so live tails wake at once.
 */
export const coordinationMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('turns').addColumn('queued_at', 'text').execute();
    // Queue order within an agent: priority first (0 = interrupt, 1 = enqueue), then arrival.
    await db.schema.alterTable('turns').addColumn('queue_priority', 'integer').execute();
    await db.schema.alterTable('turns').addColumn('queue_seq', 'integer').execute();
    await db.schema.createIndex('turns_agent_status').on('turns').columns(['agent_id', 'status']).execute();

    // One row per agent that ever queued or leased: bumping it serialises admissions per agent.
    await db.schema
      .createTable('agent_queues')
      .addColumn('agent_id', 'text', (column) => column.primaryKey())
      .addColumn('next_seq', 'integer', (column) => column.notNull())
      .execute();

    // The turn that runs in the agent's home now. Free when absent or when its turn has ended.
    await db.schema
      .createTable('agent_leases')
      .addColumn('agent_id', 'text', (column) => column.primaryKey())
      .addColumn('turn_id', 'text', (column) => column.notNull())
      .addColumn('owner', 'text', (column) => column.notNull())
      .addColumn('taken_at', 'text', (column) => column.notNull())
      .execute();

    await db.schema
      .createTable('idempotency_keys')
      .addColumn('scope', 'text', (column) => column.notNull())
      .addColumn('key', 'text', (column) => column.notNull())
      .addColumn('body_hash', 'text', (column) => column.notNull())
      .addColumn('turn_id', 'text', (column) => column.notNull())
      .addColumn('created_at', 'text', (column) => column.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['scope', 'key'])
      .execute();
    await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();

    await db.schema
      .createTable('turn_cancel_requests')
      .addColumn('turn_id', 'text', (column) => column.primaryKey().references('turns.id').onDelete('cascade'))
      .addColumn('reason', 'text', (column) => column.notNull())
      .addColumn('requested_at', 'text', (column) => column.notNull())
      .execute();

    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      // One NOTIFY per turn per committed statement (not per row): PostgreSQL delivers it at commit,
      // exactly when the rows become visible to the tail that wakes up.
      await sql`
        create function turn_runtime_notify_events() returns trigger language plpgsql as $$
        begin
          perform pg_notify(${sql.lit(SIGNAL_CHANNEL)}, 'events:' || turn_id) from (select distinct turn_id from inserted) as changed;
          return null;
        end $$`.execute(db);
      await sql`
        create trigger turn_events_notify after insert on turn_events
        referencing new table as inserted for each statement execute function turn_runtime_notify_events()`.execute(db);
    }
  },
  async down(db: Kysely<unknown>) {
    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      await sql`drop trigger if exists turn_events_notify on turn_events`.execute(db);
      await sql`drop function if exists turn_runtime_notify_events()`.execute(db);
    }
    for (const table of ['turn_cancel_requests', 'idempotency_keys', 'agent_leases', 'agent_queues']) {
      await db.schema.dropTable(table).ifExists().execute();
    }
    await db.schema.dropIndex('turns_agent_status').ifExists().execute();
    for (const column of ['queue_seq', 'queue_priority', 'queued_at']) await db.schema.alterTable('turns').dropColumn(column).execute();
  },
};
