import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStoreDatabase, openTurnStoreOn, type StoreDatabase } from '../../src/store/open-turn-store.js';
import { SavedToolSets } from '../../src/store/saved-tool-sets.js';
import type { TurnStore } from '../../src/store/turn-store.js';

describe('SavedToolSets', () => {
  let dataDir: string;
  let database: StoreDatabase;
  let store: TurnStore;
  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'saved-tool-sets-'));
    database = await openStoreDatabase({ databaseUrl: undefined, dataDir });
    store = await openTurnStoreOn(database);
  });
  afterEach(async () => {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const rows = async () => (await database.db.selectFrom('tool_sets').select(['hash', 'json']).execute()).map((row) => row.json);

  it('writes a set once it is known committed, and again after a rollback', async () => {
    const saved = new SavedToolSets();
    const json = '[{"name":"read_file"}]';

    const rolledBack = saved.writer();
    await expect(
      database.db.transaction().execute(async (trx) => {
        await rolledBack.save(trx, json);
        throw new Error('the rest of the transaction failed');
      }),
    ).rejects.toThrow('the rest of the transaction failed');
    expect(await rows()).toEqual([]);

    // The rolled-back write is not remembered: the next transaction writes the set.
    const first = saved.writer();
    const hash = await database.db.transaction().execute((trx) => first.save(trx, json));
    first.committed();
    expect(await rows()).toEqual([json]);

    // Known now: the same hash, and no statement at all (deleting the row shows it is not written again).
    await database.db.deleteFrom('tool_sets').execute();
    const second = saved.writer();
    expect(await database.db.transaction().execute((trx) => second.save(trx, json))).toBe(hash);
    expect(await rows()).toEqual([]);
  });
});
