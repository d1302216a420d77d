import { mkdtemp, readFile, rename, rm, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { endianness, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSqliteCheckpointer, type SqliteCheckpointer } from '../../src/store/sqlite-checkpointer.js';
import { openTurnStore } from '../../src/store/open-turn-store.js';
import { openDescriptorsOn } from '../support/open-connections.js';
import { waitUntil } from '../support/wait-until.js';

/** The service's connection never checkpoints for itself in these tests, unless told to. */
const NO_BACKSTOP = 1_000_000;
/** Commits of 8 KiB, about one per millisecond: 12 MB in all. */
const ROW = 'x'.repeat(8 * 1024);
const BATCHES = 1500;

let dir: string;
let file: string;
let database: BetterSqlite3.Database;
const checkpointers: SqliteCheckpointer[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'checkpointer-'));
  file = path.join(dir, 'store.sqlite');
  database = new BetterSqlite3(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.exec('create table rows (body text not null)');
});

afterEach(async () => {
  for (const checkpointer of checkpointers.splice(0)) await checkpointer.stop();
  if (database.open) database.close();
  await rm(dir, { recursive: true, force: true });
});

function start(options: { readonly onFailure?: (error: Error) => void; readonly backstopPages?: number; readonly intervalMs?: number } = {}): SqliteCheckpointer {
  const checkpointer = startSqliteCheckpointer({
    database,
    intervalMs: options.intervalMs ?? 10,
    backstopPages: options.backstopPages ?? NO_BACKSTOP,
    onFailure: options.onFailure ?? (() => undefined),
  });
  checkpointers.push(checkpointer);
  return checkpointer;
}

/**
 * Writes `batches` commits of `row`, letting the event loop run `pauseMs` between them, and
 * resting after every hundred (100 ms unless `rest` says otherwise), as a service's load comes and goes.
 */
async function writeMuch(row = ROW, pauseMs = 1, batches = BATCHES, rest: () => Promise<unknown> = () => sleep(100)): Promise<number> {
  const insert = database.prepare('insert into rows (body) values (?)');
  for (let batch = 1; batch <= batches; batch += 1) {
    insert.run(row);
    if (pauseMs > 0) await (batch % 100 === 0 ? rest() : sleep(pauseMs));
  }
  return batches * row.length;
}

const walBytes = async (): Promise<number> => (await stat(`${file}-wal`)).size;

/**
 * True once every frame of the WAL is in the database, as the wal-index (the -shm file, see
 * https://sqlite.org/walformat.html) says: its last frame (mxFrame, byte 16) against the frames
 * checkpointed (nBackfill, byte 96), in the host's byte order. Reading it checkpoints nothing.
 */
async function walCopied(): Promise<boolean> {
  const index = await readFile(`${file}-shm`);
  const word = (offset: number): number => (endianness() === 'LE' ? index.readUInt32LE(offset) : index.readUInt32BE(offset));
  return word(96) === word(16);
}

/** Rests until the thread has copied the whole WAL, however long a loaded machine takes to run it. */
const untilThreadCopied = (): Promise<unknown> => waitUntil('the checkpoint thread to copy the WAL', async () => ((await walCopied()) ? true : undefined), 15_000);
const autocheckpoint = (): unknown => database.pragma('wal_autocheckpoint', { simple: true });

describe('the SQLite checkpoint thread', () => {
  it('keeps the WAL small while the service connection never checkpoints', async () => {
    await start().ready;
    // Each rest lasts until the thread has copied the whole WAL (it fails if the thread never
    // does), not a fixed time a loaded machine might not give the thread.
    const written = await writeMuch(ROW, 1, BATCHES, untilThreadCopied);
    // The WAL restarts from its beginning each time the thread has copied all of it between two
    // commits: at the latest after each rest, so it never holds more than a hundred commits.
    expect(await walBytes()).toBeLessThan(written / 4);
    expect(autocheckpoint()).toBe(NO_BACKSTOP);
    expect(database.prepare('select count(*) as n from rows').get()).toEqual({ n: BATCHES });
  });

  it('leaves the service connection its backstop: a thread that falls behind does not let the WAL grow with what is written', async () => {
    const backstopPages = 500;
    // The thread's first pass is a minute away: it has fallen behind for the whole test, the
    // extreme of commits coming faster than it can copy them. (How far the WAL overshoots when
    // the thread holds the checkpoint at the backstop's moment depends on the disk's fsync and
    // the scheduler, so no test here races the two.)
    await start({ backstopPages, intervalMs: 60_000 }).ready;
    expect(autocheckpoint()).toBe(backstopPages);
    const written = await writeMuch('y'.repeat(16 * 1024), 0, 3000);
    const pageSize = Number(database.pragma('page_size', { simple: true }));
    expect(await walBytes()).toBeLessThan(2 * backstopPages * pageSize);
    expect(written).toBeGreaterThan(20 * backstopPages * pageSize);
    expect(database.prepare('select count(*) as n from rows').get()).toEqual({ n: 3000 });
  });

  it('is what keeps it small: without it the WAL holds everything written', async () => {
    database.pragma(`wal_autocheckpoint = ${NO_BACKSTOP}`);
    const written = await writeMuch();
    expect(await walBytes()).toBeGreaterThan(written);
  });

  it('gives checkpoints back to the service connection when stopped, and lets it be the last to close', async () => {
    const checkpointer = start();
    await checkpointer.ready;
    await writeMuch();
    await checkpointer.stop();
    expect(autocheckpoint()).toBe(1000);
    // The last connection to close checkpoints everything and removes the WAL: the thread's is closed.
    database.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it('says when the thread fails, and the service connection checkpoints for itself again', async () => {
    // The file moves away under the open connection: the thread cannot open it by its name.
    await rename(file, path.join(dir, 'moved.sqlite'));
    const failures: Error[] = [];
    const checkpointer = start({ onFailure: (error) => failures.push(error) });
    await expect(checkpointer.ready).rejects.toThrow(/checkpoint thread stopped: .*SQLITE_CANTOPEN/);
    expect(autocheckpoint()).toBe(1000);
    // Told once, though the thread also exits after saying why.
    await sleep(200);
    expect(failures.map((error) => error.message)).toHaveLength(1);
  });
});

describe('the turn store on SQLite', () => {
  it('checkpoints on a connection of its own thread, and closes that before the database', async () => {
    const dataDir = path.join(dir, 'data');
    const store = await openTurnStore({ databaseUrl: undefined, dataDir });
    const turns = path.join(dataDir, 'turns.sqlite');
    // The store's connection, and the checkpoint thread's once it has started.
    await waitUntil('two connections on the database', async () => ((await openDescriptorsOn(turns)) === 2 ? true : undefined), 10_000);
    await store.close();
    expect(await openDescriptorsOn(turns)).toBe(0);
    // The store's connection was the last to close: SQLite checkpointed everything and removed the WAL.
    expect(existsSync(`${turns}-wal`)).toBe(false);
  });
});
