import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database-schema.js';
import { SqliteWriteGroup } from '../../src/store/sqlite-write-group.js';

describe('the SQLite store\'s group commit', () => {
  let folder: string;
  let file: string;
  let sqlite: BetterSqlite3.Database;
  let db: Kysely<Database>;
  let group: SqliteWriteGroup;
  const other = (): BetterSqlite3.Database => new BetterSqlite3(file);
  const rows = (connection: BetterSqlite3.Database = sqlite): string[] =>
    (connection.prepare('select name from items order by name').all() as { name: string }[]).map((row) => row.name);
  const insert = (name: string) => () => {
    sqlite.prepare('insert into items (name) values (?)').run(name);
  };

  beforeEach(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'write-group-'));
    file = path.join(folder, 'store.db');
    sqlite = new BetterSqlite3(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.exec('create table items (name text primary key)');
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    group = new SqliteWriteGroup(db, sqlite);
  });
  afterEach(async () => {
    await db.destroy();
    await rm(folder, { recursive: true, force: true });
  });

  it('commits the writes asked for in one moment together: none is visible to others before the last has run', async () => {
    const reader = other();
    const seenByOthers: string[][] = [];
    await Promise.all([
      group.run(insert('a')),
      group.run(() => {
        insert('b')();
        seenByOthers.push(rows(reader));
      }),
    ]);
    expect(seenByOthers).toEqual([[]]);
    expect(rows(reader)).toEqual(['a', 'b']);
    reader.close();
  });

  it('fails only the write that failed, rolled back to its own savepoint; the rest of its group is stored', async () => {
    await group.run(insert('taken'));
    const outcomes = await Promise.allSettled([
      group.run(insert('first')),
      group.run(() => {
        insert('half')();
        insert('taken')(); // a primary key clash: this whole write goes, 'half' with it
      }),
      group.run(insert('last')),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE constraint failed/);
    expect(rows()).toEqual(['first', 'last', 'taken']);
  });

  it('fails every write of a group that could not commit, and keeps none of them', async () => {
    const blocker = other();
    blocker.pragma('busy_timeout = 0');
    sqlite.pragma('busy_timeout = 0');
    blocker.exec('begin immediate');
    const outcomes = await Promise.allSettled([group.run(insert('x')), group.run(insert('y'))]);
    blocker.exec('rollback');
    blocker.close();
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/locked|busy/i);
    expect(rows()).toEqual([]);
    // The group goes on working afterwards.
    await group.run(insert('z'));
    expect(rows()).toEqual(['z']);
  });

  it('runs work through Kysely as a transaction of the group: it reads its own writes, commits with the rest, and resolves with its result', async () => {
    const reader = other();
    const seenByOthers: string[][] = [];
    const [, counted] = await Promise.all([
      group.run(insert('sync')),
      group.transact(async (trx) => {
        await sql`insert into items (name) values (${'work'})`.execute(trx);
        const { rows: inside } = await sql<{ count: number }>`select count(*) as count from items`.execute(trx);
        seenByOthers.push(rows(reader));
        return inside[0]?.count;
      }),
      group.run(insert('after')),
    ]);
    expect(counted).toBe(2); // its own row and the write before it in the group
    expect(seenByOthers).toEqual([[]]);
    expect(rows(reader)).toEqual(['after', 'sync', 'work']);
    reader.close();
  });

  it('keeps nothing of work that throws, and fails it alone with its own error', async () => {
    class Decided extends Error {}
    const outcomes = await Promise.allSettled([
      group.transact(async (trx) => {
        await sql`insert into items (name) values (${'undone'})`.execute(trx);
        throw new Decided('not this one');
      }),
      group.transact(async (trx) => {
        await sql`insert into items (name) values (${'kept'})`.execute(trx);
        return 'ok';
      }),
      group.run(insert('also kept')),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect((outcomes[0] as PromiseRejectedResult).reason).toBeInstanceOf(Decided);
    expect((outcomes[1] as PromiseFulfilledResult<string>).value).toBe('ok');
    expect(rows()).toEqual(['also kept', 'kept']);
  });
});
