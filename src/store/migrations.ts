import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The store's migrations, in order. Written once for SQLite and PostgreSQL alike: text for
 * JSON and timestamps (ISO 8601 sorts as text), integers for counters.
 */
export const migrations: Record<string, Migration> = {
  '2026-11-30-001-turns': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('turns')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('agent_id', 'text', (column) => column.notNull())
        .addColumn('kind', 'text', (column) => column.notNull())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('model', 'text', (column) => column.notNull())
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('finished_at', 'text')
        .addColumn('iterations', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('output', 'text')
        .addColumn('result_json', 'text')
        .addColumn('error_json', 'text')
        .addColumn('outcome', 'text')
        .addColumn('input_tokens', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('output_tokens', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('owner', 'text', (column) => column.notNull())
        .addColumn('heartbeat_at', 'text', (column) => column.notNull())
        .addColumn('task_json', 'text')
        .execute();
      await db.schema.createIndex('turns_status_heartbeat').on('turns').columns(['status', 'heartbeat_at']).execute();
      await db.schema.createIndex('turns_agent_created').on('turns').columns(['agent_id', 'created_at']).execute();

      await db.schema
        .createTable('turn_events')
        .addColumn('turn_id', 'text', (column) => column.notNull().references('turns.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (column) => column.notNull())
        .addColumn('type', 'text', (column) => column.notNull())
        .addColumn('body', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('turn_events_pk', ['turn_id', 'seq'])
        .execute();

      // What turns were given, kept once per distinct JSON text: consecutive turns of an agent
      // usually get byte-identical tool lists, and with a large deferred catalog one list can
      // be a megabyte.
      await db.schema
        .createTable('tool_sets')
        .addColumn('hash', 'text', (column) => column.primaryKey())
        .addColumn('json', 'text', (column) => column.notNull())
        .execute();

      await db.schema
        .createTable('turn_tools')
        .addColumn('turn_id', 'text', (column) => column.primaryKey().references('turns.id').onDelete('cascade'))
        .addColumn('tools_hash', 'text', (column) => column.notNull().references('tool_sets.hash'))
        .addColumn('unavailable_json', 'text', (column) => column.notNull().defaultTo('[]'))
        .execute();

      await db.schema
        .createTable('turn_provider_tools')
        .addColumn('turn_id', 'text', (column) => column.notNull().references('turns.id').onDelete('cascade'))
        .addColumn('iteration', 'integer', (column) => column.notNull())
        .addColumn('tools_hash', 'text', (column) => column.notNull().references('tool_sets.hash'))
        .addPrimaryKeyConstraint('turn_provider_tools_pk', ['turn_id', 'iteration'])
        .execute();

      await db.schema
        .createTable('todos')
        .addColumn('agent_id', 'text', (column) => column.primaryKey())
        .addColumn('items_json', 'text', (column) => column.notNull())
        .addColumn('updated_at', 'text', (column) => column.notNull())
        .addColumn('revision', 'integer', (column) => column.notNull().defaultTo(sql`0`))
        .execute();
    },
    async down(db: Kysely<unknown>) {
      for (const table of ['todos', 'turn_provider_tools', 'turn_tools', 'tool_sets', 'turn_events', 'turns']) {
        await db.schema.dropTable(table).ifExists().execute();
      }
    },
  },
  '2026-12-01-observe-001-turns-created': {
    // The inspector lists recent turns of every agent, newest first.
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('turns_created').on('turns').columns(['created_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('turns_created').ifExists().execute();
    },
  },
};
