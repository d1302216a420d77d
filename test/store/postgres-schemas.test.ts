import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openTurnStore } from '../../src/store/open-turn-store.js';
import type { TurnStore } from '../../src/store/turn-store.js';
import { createPostgresSchema, TEST_POSTGRES_URL, type PostgresSchema } from '../support/postgres-schema.js';

const dataDir = path.join(tmpdir(), 'unused-by-postgres');

describe('the turn store on a PostgreSQL server shared with other schemas', () => {
  const schemas: PostgresSchema[] = [];
  const stores: TurnStore[] = [];

  async function openIn(schema: PostgresSchema): Promise<TurnStore> {
    const store = await schema.whileSchemasAreStable(() => openTurnStore({ databaseUrl: schema.url, dataDir }));
    stores.push(store);
    return store;
  }

  afterEach(async () => {
    try {
      for (const store of stores.splice(0)) await store.close();
    } finally {
      for (const schema of schemas.splice(0)) await schema.drop();
    }
  });

  it('migrates its own schema even when another schema already has Kysely’s migration tables', async () => {
    const neighbour = await createPostgresSchema();
    const mine = await createPostgresSchema();
    schemas.push(neighbour, mine);
    await openIn(neighbour);
    const store = await openIn(mine);
    await store.writeTodos('agent-1', [{ content: 'works', status: 'pending' }]);
    expect(await store.readTodos('agent-1')).toEqual([{ content: 'works', status: 'pending' }]);

    const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ table_schema: string; table_name: string }>(
        `SELECT table_schema, table_name FROM information_schema.tables
          WHERE table_schema = ANY($1) AND table_name LIKE 'kysely_migration%' ORDER BY table_schema, table_name`,
        [[neighbour.name, mine.name]],
      );
      expect(rows.filter((row) => row.table_schema === mine.name).map((row) => row.table_name)).toEqual(['kysely_migration', 'kysely_migration_lock']);
    } finally {
      await client.end();
    }
  });

  it('keeps turns of one schema invisible from another', async () => {
    const first = await createPostgresSchema();
    const second = await createPostgresSchema();
    schemas.push(first, second);
    const one = await openIn(first);
    const two = await openIn(second);
    await one.writeTodos('agent-1', [{ content: 'first only', status: 'pending' }]);
    expect(await two.readTodos('agent-1')).toEqual([]);
  });
});
