import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './database-schema.js';
import { KyselyTurnStore } from './kysely-turn-store.js';
import { withStatementCache } from './statement-cache.js';
import type { TurnStore } from './turn-store.js';

/**
 * Opens the turn store: PostgreSQL when a `postgres://` URL is configured (replicas share it),
 * otherwise a SQLite file under the data folder (one process owns it).
 */
export async function openTurnStore(options: { readonly databaseUrl: string | undefined; readonly dataDir: string }): Promise<TurnStore> {
  if (options.databaseUrl !== undefined) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    // The schema `search_path` puts the tables in ('public' by default): Kysely's migration
    // bookkeeping must live there too, not in whichever schema already has a table of that name.
    let schema: string | null;
    try {
      const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
      schema = rows[0]?.schema ?? null;
    } catch (error) {
      await db.destroy();
      throw error;
    }
    return KyselyTurnStore.open(db, schema === null ? {} : { migrationTableSchema: schema });
  }
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const database = new BetterSqlite3(path.join(options.dataDir, 'turns.sqlite'));
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  return KyselyTurnStore.open(new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) }));
}
