import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Database } from './database-schema.js';
import type { StoredEvent, TurnProgress } from './turn-store.js';

/** Appends a batch of a turn's events, with its progress, in one transaction. */
export type AppendEvents = (turnId: string, events: readonly StoredEvent[], progress: TurnProgress | undefined) => Promise<void>;

/**
 * The SQLite store's hot write, past the query builder: the flush of a running turn's events,
 * several times a turn. Two statements prepared once and run in a synchronous better-sqlite3
 * transaction cost a fraction of building, compiling and binding a multi-row insert in Kysely
 * each time (its visitor walks four nodes per row). It runs while holding Kysely's one SQLite
 * connection, so it never lands inside a Kysely transaction that another part has open across
 * an await.
 */
export function createSqliteEventAppender(db: Kysely<Database>, sqlite: BetterSqlite3.Database): AppendEvents {
  // Prepared on first use: the tables exist only once the store has migrated.
  let write: ((turnId: string, events: readonly StoredEvent[], progress: TurnProgress | undefined) => void) | undefined;
  const prepare = () => {
    const insert = sqlite.prepare<[string, number, string, string]>('insert into "turn_events" ("turn_id", "seq", "type", "body") values (?, ?, ?, ?)');
    const recordProgress = sqlite.prepare<[number, number, number, string]>(
      `update "turns" set "iterations" = ?, "input_tokens" = ?, "output_tokens" = ? where "id" = ? and "status" = 'running'`,
    );
    return sqlite.transaction((turnId: string, events: readonly StoredEvent[], progress: TurnProgress | undefined) => {
      for (const event of events) insert.run(turnId, event.seq, event.type, event.json);
      if (progress !== undefined) recordProgress.run(progress.iterations, progress.usage.inputTokens, progress.usage.outputTokens, turnId);
    });
  };
  return (turnId, events, progress) =>
    db.connection().execute(() => {
      write ??= prepare();
      write(turnId, events, progress);
      return Promise.resolve();
    });
}
