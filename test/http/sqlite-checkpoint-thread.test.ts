import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openDescriptorsOn } from '../support/open-connections.js';
import { readJson, startTestRuntime } from '../support/test-runtime.js';
import { waitUntil } from '../support/wait-until.js';

describe('the service on its embedded SQLite store', () => {
  const folders: string[] = [];
  afterAll(async () => {
    await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
  });

  it('checkpoints on a connection of its own while it runs turns, and leaves no WAL when it closes', async () => {
    const runtime = await startTestRuntime();
    folders.push(runtime.dataDir);
    const database = path.join(runtime.dataDir, 'turns.sqlite');
    // The service's connection, and the checkpoint thread's once it has started.
    await waitUntil('two connections on the database', async () => ((await openDescriptorsOn(database)) === 2 ? true : undefined), 10_000);

    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ agent: { id: 'checkpointed' }, input: 'Say hello', model: { script: [{ text: 'Hello.' }] } }),
    });
    expect(response.status).toBe(200);
    const turn = await readJson(response);
    expect(turn.status).toBe('completed');

    await runtime.close({ keepData: true });
    // The thread closed its connection first, so the service's was the last: SQLite checkpointed
    // everything into the file and removed the WAL.
    expect(await openDescriptorsOn(database)).toBe(0);
    expect(existsSync(`${database}-wal`)).toBe(false);
    const reader = new BetterSqlite3(database, { readonly: true });
    try {
      expect(reader.prepare('select status from turns where id = ?').get(turn.id)).toEqual({ status: 'completed' });
    } finally {
      reader.close();
    }
  });
});
