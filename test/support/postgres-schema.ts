import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The PostgreSQL server tests use; CI and the dev machine run one here (trust auth). */
export const TEST_POSTGRES_URL = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * An advisory lock key shared by every test run on the server. Opening a store introspects
 * every schema by name (Kysely's migrator), which fails if another run drops its schema at that
 * moment; so opens hold the lock shared and drops hold it exclusively.
 */
const SCHEMA_LOCK_KEY = 7_482_910_311;

export interface PostgresSchema {
  /** `test_<random>`, created for this run only. */
  readonly name: string;
  /** The server URL with `search_path` set to the schema, for `openTurnStore`. */
  readonly url: string;
  /** Runs `work` (opening a store) while no run is dropping a schema. */
  whileSchemasAreStable<T>(work: () => Promise<T>): Promise<T>;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

/**
 * A fresh schema on the test server, so parallel runs never see each other's tables. Fails
 * loudly when the server is unreachable: a PostgreSQL suite must never skip silently.
 */
export async function createPostgresSchema(): Promise<PostgresSchema> {
  const name = `test_${randomBytes(8).toString('hex')}`;
  await withClient(async (client) => {
    await client.query(`CREATE SCHEMA "${name}"`);
  });
  const separator = TEST_POSTGRES_URL.includes('?') ? '&' : '?';
  return {
    name,
    url: `${TEST_POSTGRES_URL}${separator}options=${encodeURIComponent(`-c search_path=${name}`)}`,
    whileSchemasAreStable: async <T>(work: () => Promise<T>) => {
      let result: T | undefined;
      await withClient(async (client) => {
        await client.query('SELECT pg_advisory_lock_shared($1)', [SCHEMA_LOCK_KEY]);
        result = await work();
      });
      return result as T;
    },
    drop: () =>
      withClient(async (client) => {
        await client.query('SELECT pg_advisory_lock($1)', [SCHEMA_LOCK_KEY]);
        await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
        // Durable work (pg-boss 12, and pg-boss 10 where a test made one) keeps its tables in a schema beside the store's.
        await client.query(`DROP SCHEMA IF EXISTS "${name}_pgboss_v12" CASCADE`);
        await client.query(`DROP SCHEMA IF EXISTS "${name}_pgboss" CASCADE`);
      }),
  };
}

/** Runs `use` on a fresh connection; closing it releases any advisory lock taken on it. */
async function withClient(use: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (error) {
    const where = new URL(TEST_POSTGRES_URL);
    throw new Error(
      `PostgreSQL is not reachable at ${where.host}${where.pathname} (${error instanceof Error ? error.message : String(error)}). ` +
        'The store suite needs it: start PostgreSQL or point TEST_POSTGRES_URL at one.',
      { cause: error },
    );
  }
  try {
    await use(client);
  } finally {
    await client.end();
  }
}
