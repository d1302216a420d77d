import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from './database-schema.js';
import { KyselyTurnStore } from './kysely-turn-store.js';
import { startSqliteCheckpointer } from './sqlite-checkpointer.js';
import { withStatementCache } from './statement-cache.js';
import type { TurnStore } from './turn-store.js';

/** The store's database connection, shared by the turn store and what else keeps tables there. */
export interface StoreDatabase {
  readonly db: Kysely<Database>;
  readonly dialect: 'sqlite' | 'postgres';
  /** PostgreSQL: the schema `search_path` puts the tables in. */
  readonly schema: string | undefined;
  /** SQLite: the database under Kysely, for the store's hot write (see sqlite-hot-writes.ts). */
  readonly sqlite?: BetterSqlite3.Database;
  /**
   * PostgreSQL: connections of their own for the turns' heartbeats and the orphan sweep. In the
   * shared pool they would queue behind event writes, and under overload a queue longer than the
   * orphan threshold makes live turns look dead to the other replicas.
   */
  readonly liveness?: Kysely<Database>;
}

/** The shared pool, and the liveness pool beside it. */
const POOL_CONNECTIONS = 10;
const LIVENESS_CONNECTIONS = 2;

/**
 * Opens the store's database: PostgreSQL when a `postgres://` URL is configured (replicas
 * share it), otherwise a SQLite file under the data folder (one process owns it).
 */
export async function openStoreDatabase(options: { readonly databaseUrl: string | undefined; readonly dataDir: string }): Promise<StoreDatabase> {
  if (options.databaseUrl !== undefined) {
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: options.databaseUrl, max: POOL_CONNECTIONS }) }) });
    // Idle liveness connections close after a while: replicas with no turns hold none.
    const liveness = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: options.databaseUrl, max: LIVENESS_CONNECTIONS, idleTimeoutMillis: 30_000 }) }),
    });
    // The schema `search_path` puts the tables in ('public' by default): Kysely's migration
    // bookkeeping must live there too, not in whichever schema already has a table of that name.
    try {
      const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
      return { db, dialect: 'postgres', schema: rows[0]?.schema ?? undefined, liveness };
    } catch (error) {
      await Promise.all([db.destroy(), liveness.destroy()]);
      throw error;
    }
  }
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const database = new BetterSqlite3(path.join(options.dataDir, 'turns.sqlite'));
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) }), dialect: 'sqlite', schema: undefined, sqlite: database };
}

/**
 * Opens the turn store over an opened database (migrating it); closing the store closes the
 * database. On SQLite, a worker thread checkpoints the WAL from then on (sqlite-checkpointer.ts);
 * `logger` hears if it fails.
 */
export async function openTurnStoreOn(database: StoreDatabase, options: { readonly logger?: Logger; readonly brainPagesPerAgent?: number } = {}): Promise<TurnStore> {
  const { sqlite } = database;
  return KyselyTurnStore.open(database.db, {
    ...(database.schema === undefined ? {} : { migrationTableSchema: database.schema }),
    ...(sqlite === undefined ? {} : { sqlite }),
    ...(database.liveness === undefined ? {} : { liveness: database.liveness }),
    ...(options.brainPagesPerAgent === undefined ? {} : { brainPagesPerAgent: options.brainPagesPerAgent }),
    ...(sqlite === undefined || sqlite.memory
      ? {}
      : {
          startCheckpointer: () =>
            startSqliteCheckpointer({
              database: sqlite,
              onFailure: (error) => {
                options.logger?.warn({ err: error }, 'the SQLite checkpoint thread stopped; the store checkpoints on its own connection again');
              },
            }),
        }),
  });
}

/** Opens the turn store: its database and its migrations. */
export async function openTurnStore(options: { readonly databaseUrl: string | undefined; readonly dataDir: string; readonly logger?: Logger }): Promise<TurnStore> {
  return openTurnStoreOn(await openStoreDatabase(options), options);
}
