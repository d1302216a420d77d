import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrations } from '../../src/store/migrations.js';
import { openTurnStore } from '../../src/store/open-turn-store.js';
import { createPostgresSchema } from '../support/postgres-schema.js';

const BEFORE_BRAIN = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '2026-12-01'));

/** Brings a database to the schema it had before the Brain, as an existing deployment has it. */
async function migrateBeforeBrain(db: Kysely<unknown>, migrationTableSchema?: string): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: () => Promise.resolve(BEFORE_BRAIN) }, ...(migrationTableSchema === undefined ? {} : { migrationTableSchema }) });
  const { error } = await migrator.migrateToLatest();
  expect(error).toBeUndefined();
  await db.destroy();
}

describe('the Brain migration', () => {
  it('upgrades an existing SQLite store, whose todos survive', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'brain-migration-'));
    try {
      await migrateBeforeBrain(new Kysely({ dialect: new SqliteDialect({ database: new BetterSqlite3(path.join(dataDir, 'turns.sqlite')) }) }));
      const store = await openTurnStore({ databaseUrl: undefined, dataDir });
      await store.writeTodos('old-agent', [{ content: 'keep me', status: 'pending' }]);
      await store.brain.putPage({ agentId: 'old-agent', page: { reference: 'p', title: '迁移', content: '数据库迁移以后也能搜索。', tags: [] }, now: '2026-12-01T00:00:00.000Z' });
      expect((await store.brain.searchPages({ agentId: 'old-agent', query: { terms: ['搜索'], phrases: [] }, limit: 5 })).map((hit) => hit.page.reference)).toEqual(['p']);
      await store.close();
      const reopened = await openTurnStore({ databaseUrl: undefined, dataDir });
      expect(await reopened.readTodos('old-agent')).toEqual([{ content: 'keep me', status: 'pending' }]);
      expect(await reopened.brain.getPage({ agentId: 'old-agent', reference: 'p' })).toMatchObject({ title: '迁移' });
      await reopened.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('upgrades an existing PostgreSQL schema', async () => {
    const schema = await createPostgresSchema();
    try {
      await schema.whileSchemasAreStable(() => migrateBeforeBrain(new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: schema.url, max: 1 }) }) }), schema.name));
      const store = await schema.whileSchemasAreStable(() => openTurnStore({ databaseUrl: schema.url, dataDir: tmpdir() }));
      await store.brain.putPage({ agentId: 'old-agent', page: { reference: 'p', title: '移行', content: 'データベースの移行後も検索できます。', tags: [] }, now: '2026-12-01T00:00:00.000Z' });
      expect((await store.brain.searchPages({ agentId: 'old-agent', query: { terms: ['検索'], phrases: [] }, limit: 5 })).map((hit) => hit.page.reference)).toEqual(['p']);
      await store.close();
    } finally {
      await schema.drop();
    }
  });
});
