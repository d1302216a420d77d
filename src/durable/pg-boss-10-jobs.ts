import pg from 'pg';
import type { PgBoss } from 'pg-boss';

/**
 * The schema version pg-boss 10 keeps in `<schema>.version`. No pg-boss release migrates it:
 * 11.0 rebuilt the schema (version 25) without a migration, and pg-boss 12's chain starts at
 * 25 (its `start()` refuses a version-24 schema and leaves it as it is). So pg-boss 12 gets a
 * schema of its own, and the work still waiting in the old one is moved over, queue by queue.
 */
export const PG_BOSS_10_SCHEMA_VERSION = 24;

/** Whether `schema` holds a pg-boss 10 install (its version table says 24). */
export async function hasPgBoss10Schema(options: { readonly connectionString: string; readonly schema: string }): Promise<boolean> {
  return withClient(options.connectionString, async (client) => {
    const table = `${client.escapeIdentifier(options.schema)}.version`;
    const { rows } = await client.query<{ present: string | null }>('SELECT to_regclass($1) AS present', [table]);
    if (rows[0]?.present === null || rows[0]?.present === undefined) return false;
    const version = await client.query<{ version: number }>(`SELECT version FROM ${table}`);
    return version.rows[0]?.version === PG_BOSS_10_SCHEMA_VERSION;
  });
}

/**
 * Moves one queue's unfinished jobs (created, retry, or active when their pg-boss 10 worker
 * is gone) from the pg-boss 10 schema into pg-boss 12, in one transaction: the rows are
 * deleted there and inserted here on the same connection, so a job is moved once even when
 * replicas start together (the second DELETE finds the rows gone). Ids, payloads, singleton
 * keys and start times are kept; an active job runs again at once, which its idempotent
 * handler allows. pg-boss's insert takes no attempt count, so a moved job starts again at
 * attempt 1 with the queue's full retry limit. Resolves with the number of jobs moved.
 */
export async function movePgBoss10Jobs(options: { readonly connectionString: string; readonly legacySchema: string; readonly queue: string; readonly boss: PgBoss }): Promise<number> {
  return withClient(options.connectionString, async (client) => {
    await client.query('BEGIN');
    try {
      const { rows } = await client.query<LegacyJobRow>(
        `DELETE FROM ${client.escapeIdentifier(options.legacySchema)}.job
          WHERE name = $1 AND state < 'completed'
          RETURNING id, data, priority, state, start_after, singleton_key`,
        [options.queue],
      );
      if (rows.length > 0) {
        const now = new Date();
        await options.boss.insert(
          options.queue,
          rows.map((row) => ({
            id: row.id,
            data: row.data ?? {},
            priority: row.priority,
            startAfter: row.state === 'active' ? now : row.start_after,
            ...(row.singleton_key === null ? {} : { singletonKey: row.singleton_key }),
          })),
          { db: { executeSql: (text, values) => client.query(text, values) } },
        );
      }
      await client.query('COMMIT');
      return rows.length;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}

interface LegacyJobRow {
  readonly id: string;
  readonly data: object | null;
  readonly priority: number;
  readonly state: 'created' | 'retry' | 'active';
  readonly start_after: Date;
  readonly singleton_key: string | null;
}

async function withClient<T>(connectionString: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString, application_name: 'turn-runtime pg-boss 10 move' });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}
