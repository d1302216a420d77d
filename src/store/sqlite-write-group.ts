import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Database } from './database-schema.js';

/** A write of the next group: synchronous better-sqlite3 calls, or a piece of work through Kysely. */
type QueuedWrite =
  | { readonly kind: 'sync'; readonly write: () => void; readonly resolve: () => void; readonly reject: (error: unknown) => void }
  | {
      readonly kind: 'work';
      readonly work: (db: Kysely<Database>) => Promise<unknown>;
      readonly resolve: (value: unknown) => void;
      readonly reject: (error: unknown) => void;
    };

/** How one write of a group went, known once it has run and settled once the group has committed. */
type WriteResult = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/**
 * Commits the store's hot writes in groups: the writes asked for in one turn of the event loop
 * run in one SQLite transaction, each in a savepoint of its own. Turns' event flushes are timers,
 * and the timers due together fire in one pass of the loop: with 16 turns running, about ten
 * writes came in each such pass, and each paid a commit of its own (the WAL frames of the same
 * hot pages, written again and again). One commit now carries them all, and the admissions of
 * new turns asked for in the same pass (`transact`) with them.
 *
 * A write that fails is rolled back to its savepoint and fails alone; the others commit. When the
 * transaction itself cannot go on (SQLite rolled it back, or the commit failed), every write of
 * the group fails, as nothing of it was kept; each caller's retry (retryStoreWrite) writes it
 * again. A write's promise settles only after its group's commit: resolved means stored. The
 * group runs while holding Kysely's one connection, never inside a Kysely transaction that
 * another part has open across an await; the cost of grouping is one `setImmediate`.
 */
export class SqliteWriteGroup {
  readonly #db: Kysely<Database>;
  readonly #sqlite: BetterSqlite3.Database;
  /** A better-sqlite3 transaction function: inside the group's transaction, each call is a savepoint (rolled back alone when the write throws). */
  readonly #inSavepoint: BetterSqlite3.Transaction<(write: () => void) => void>;
  readonly #statements: Readonly<Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackToSavepoint', BetterSqlite3.Statement>>;
  #queued: QueuedWrite[] = [];

  constructor(db: Kysely<Database>, sqlite: BetterSqlite3.Database) {
    this.#db = db;
    this.#sqlite = sqlite;
    this.#inSavepoint = sqlite.transaction((write: () => void) => {
      write();
    });
    this.#statements = {
      begin: sqlite.prepare('begin'),
      commit: sqlite.prepare('commit'),
      rollback: sqlite.prepare('rollback'),
      savepoint: sqlite.prepare('savepoint "group_work"'),
      release: sqlite.prepare('release "group_work"'),
      rollbackToSavepoint: sqlite.prepare('rollback to "group_work"'),
    };
  }

  /** Runs `write` (synchronous better-sqlite3 calls) in the next group; resolves once it is committed. */
  run(write: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#enqueue({ kind: 'sync', write, resolve, reject });
    });
  }

  /**
   * Runs `work` in the next group, as a transaction of its own would run it (its reads see its
   * own writes; when it throws, nothing of it is kept and the promise rejects with its error),
   * and resolves with what it returned once the group has committed. `work` must do everything
   * through the `db` it is given, which is the group's connection: a query through any other
   * handle of the store would wait for the group, which waits for `work`.
   */
  transact<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#enqueue({ kind: 'work', work, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  #enqueue(write: QueuedWrite): void {
    this.#queued.push(write);
    if (this.#queued.length === 1) {
      setImmediate(() => {
        void this.#commit();
      });
    }
  }

  async #commit(): Promise<void> {
    const group = this.#queued;
    this.#queued = [];
    const results = new Map<QueuedWrite, WriteResult>();
    try {
      await this.#db.connection().execute(async (connection) => {
        const statements = this.#statements;
        statements.begin.run();
        try {
          for (const queued of group) results.set(queued, await this.#runOne(queued, connection));
          statements.commit.run();
        } catch (error) {
          if (this.#sqlite.inTransaction) statements.rollback.run();
          throw error;
        }
        // Settled here, still holding the connection: a writer's next step (a turn delivering its
        // end, giving its slot back) is queued before anyone else can read what was committed.
        for (const queued of group) {
          const result = results.get(queued);
          if (result === undefined || !result.ok) queued.reject(result?.error);
          else if (queued.kind === 'sync') queued.resolve();
          else queued.resolve(result.value);
        }
      });
    } catch (error) {
      for (const queued of group) queued.reject(error);
    }
  }

  /** One write in its savepoint; throws only when SQLite has ended the group's transaction. */
  async #runOne(queued: QueuedWrite, connection: Kysely<Database>): Promise<WriteResult> {
    try {
      if (queued.kind === 'work') return { ok: true, value: await this.#inAsyncSavepoint(queued.work, connection) };
      this.#inSavepoint(queued.write);
      return { ok: true, value: undefined };
    } catch (error) {
      // The transaction goes on without this write, unless SQLite has ended it.
      if (!this.#sqlite.inTransaction) throw error;
      return { ok: false, error };
    }
  }

  /** What better-sqlite3's transaction functions do for a synchronous write, for one that awaits. */
  async #inAsyncSavepoint(work: (db: Kysely<Database>) => Promise<unknown>, connection: Kysely<Database>): Promise<unknown> {
    const statements = this.#statements;
    statements.savepoint.run();
    try {
      const value = await work(connection);
      statements.release.run();
      return value;
    } catch (error) {
      if (this.#sqlite.inTransaction) {
        statements.rollbackToSavepoint.run();
        statements.release.run();
      }
      throw error;
    }
  }
}
