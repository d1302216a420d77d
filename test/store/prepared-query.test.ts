import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database-schema.js';
import { PreparedQuery } from '../../src/store/prepared-query.js';

describe('a prepared query', () => {
  let folder: string;
  let db: Kysely<Database>;
  beforeEach(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'prepared-query-'));
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(path.join(folder, 'store.db')) }) });
    await sql`create table agent_leases (agent_id text primary key, turn_id text not null, owner text not null, taken_at text not null)`.execute(db);
  });
  afterEach(async () => {
    await db.destroy();
    await rm(folder, { recursive: true, force: true });
  });

  it('is built and compiled once, then runs with each call\'s values, in a transaction too', async () => {
    let builds = 0;
    const take = new PreparedQuery((database, values: { agentId: string; turnId: string; at: string }) => {
      builds += 1;
      return database.insertInto('agent_leases').values({ agent_id: values.agentId, turn_id: values.turnId, owner: 'replica-1', taken_at: values.at });
    });
    const holder = new PreparedQuery((database, values: { agentId: string }) => database.selectFrom('agent_leases').select(['turn_id', 'owner']).where('agent_id', '=', values.agentId));
    await take.run(db, { agentId: 'a', turnId: 't1', at: '2026-12-01T00:00:00.000Z' });
    await db.transaction().execute(async (trx) => {
      await take.run(trx, { agentId: 'b', turnId: 't2', at: '2026-12-01T00:00:01.000Z' });
    });
    expect(builds).toBe(1);
    expect(await holder.first(db, { agentId: 'b' })).toEqual({ turn_id: 't2', owner: 'replica-1' });
    expect(await holder.first(db, { agentId: 'a' })).toEqual({ turn_id: 't1', owner: 'replica-1' });
    expect(await holder.first(db, { agentId: 'nobody' })).toBeUndefined();
    // A value that is a constant of the query stays one: every row has the same owner.
    expect((await db.selectFrom('agent_leases').select('owner').distinct().execute()).map((row) => row.owner)).toEqual(['replica-1']);
  });

  it('refuses a query that does not bind one of its values as a parameter', async () => {
    const careless = new PreparedQuery((database, _values: { agentId: string; unused: string }) =>
      database.selectFrom('agent_leases').select('turn_id').where('agent_id', '=', _values.agentId),
    );
    await expect(careless.run(db, { agentId: 'a', unused: 'x' })).rejects.toThrow(/unused not bound/);
  });
});
