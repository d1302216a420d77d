import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Database } from './database-schema.js';
import { SqliteWriteGroup } from './sqlite-write-group.js';
import { turnFinishColumns } from './turn-finish-columns.js';
import type { StoredEvent, TurnFinish, TurnProgress } from './turn-record.js';

/** The SQLite store's hot writes: those every turn makes, past the query builder. */
export interface SqliteHotWrites {
  /** A batch of a running turn's events, with its progress, in one transaction. */
  appendEvents(turnId: string, events: readonly StoredEvent[], progress: TurnProgress | undefined): Promise<void>;
  /** The turn's last events, its final record and (when asked) its agent's lease given back, in one transaction. */
  finishTurn(turnId: string, events: readonly StoredEvent[], finish: TurnFinish, releaseAgent: string | undefined): Promise<void>;
  /** Work through Kysely as one transaction, committed with the group it joins (see SqliteWriteGroup.transact). */
  readonly transact: <T>(work: (db: Kysely<Database>) => Promise<T>) => Promise<T>;
}

/**
 * The writes a turn makes several times (its event batches) and once (its end), as statements
 * prepared once and run synchronously by better-sqlite3: a fraction of the cost of building,
 * compiling and binding them in Kysely each time (its visitor walks four nodes per inserted row,
 * and a transaction through it is several promise hops). Each is one savepoint of a group
 * commit (SqliteWriteGroup): what several turns write at the same moment is committed once. The
 * SQL is that of the Kysely path beside it (kysely-turn-store.ts), which PostgreSQL runs; the
 * store tests run both.
 */
export function createSqliteHotWrites(db: Kysely<Database>, sqlite: BetterSqlite3.Database): SqliteHotWrites {
  // Prepared on first use: the tables exist only once the store has migrated.
  let prepared: ReturnType<typeof prepare> | undefined;
  const prepare = () => {
    const insertEvent = sqlite.prepare<[string, number, string, string]>('insert into "turn_events" ("turn_id", "seq", "type", "body") values (?, ?, ?, ?)');
    const recordProgress = sqlite.prepare<[number, number, number, string]>(
      `update "turns" set "iterations" = ?, "input_tokens" = ?, "output_tokens" = ? where "id" = ? and "status" = 'running'`,
    );
    const releaseLease = sqlite.prepare<[string, string]>('delete from "agent_leases" where "agent_id" = ? and "turn_id" = ?');
    const recordFinish = sqlite.prepare<[string, string, number, string | null, string | null, string | null, string | null, number, number, string]>(
      `update "turns" set "status" = ?, "finished_at" = ?, "iterations" = ?, "output" = ?, "result_json" = ?, "error_json" = ?, "outcome" = ?, "input_tokens" = ?, "output_tokens" = ? where "id" = ?`,
    );
    const insertEvents = (turnId: string, events: readonly StoredEvent[]) => {
      for (const event of events) insertEvent.run(turnId, event.seq, event.type, event.json);
    };
    return {
      append: (turnId: string, events: readonly StoredEvent[], progress: TurnProgress | undefined) => {
        insertEvents(turnId, events);
        if (progress !== undefined) recordProgress.run(progress.iterations, progress.usage.inputTokens, progress.usage.outputTokens, turnId);
      },
      finish: (turnId: string, events: readonly StoredEvent[], finish: TurnFinish, releaseAgent: string | undefined) => {
        insertEvents(turnId, events);
        if (releaseAgent !== undefined) releaseLease.run(releaseAgent, turnId);
        const columns = turnFinishColumns(finish);
        recordFinish.run(
          columns.status,
          columns.finished_at,
          columns.iterations,
          columns.output,
          columns.result_json,
          columns.error_json,
          columns.outcome,
          columns.input_tokens,
          columns.output_tokens,
          turnId,
        );
      },
    };
  };
  const group = new SqliteWriteGroup(db, sqlite);
  const run = (write: (statements: ReturnType<typeof prepare>) => void): Promise<void> =>
    group.run(() => {
      prepared ??= prepare();
      write(prepared);
    });
  return {
    appendEvents: (turnId, events, progress) =>
      run((statements) => {
        statements.append(turnId, events, progress);
      }),
    finishTurn: (turnId, events, finish, releaseAgent) =>
      run((statements) => {
        statements.finish(turnId, events, finish, releaseAgent);
      }),
    transact: (work) => group.transact(work),
  };
}
