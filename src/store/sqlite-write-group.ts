import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Database } from './database-schema.js';

interface QueuedWrite {
  readonly write: () => void;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Commits the store's hot writes in groups: the writes asked for in one turn of the event loop
 * run in one SQLite transaction, each in a savepoint of its own. Turns' event flushes are timers,
 * and the timers due together fire in one pass of the loop: with 16 turns running, about ten
 * writes came in each such pass, and each paid a commit of its own (the WAL frames of the same
 * hot pages, written again and again). One commit now carries them all.
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
  #queued: QueuedWrite[] = [];

  constructor(db: Kysely<Database>, sqlite: BetterSqlite3.Database) {
    this.#db = db;
    this.#sqlite = sqlite;
  }

  /** Runs `write` (synchronous better-sqlite3 calls) in the next group; resolves once it is committed. */
  run(write: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queued.push({ write, resolve, reject });
      if (this.#queued.length === 1) {
        setImmediate(() => {
          void this.#commit();
        });
      }
    });
  }

  async #commit(): Promise<void> {
    const group = this.#queued;
    this.#queued = [];
    const failed = new Map<QueuedWrite, unknown>();
    try {
      await this.#db.connection().execute(() => {
        this.#sqlite.transaction(() => {
          for (const queued of group) {
            this.#sqlite.exec('savepoint hot_write');
            try {
              queued.write();
              this.#sqlite.exec('release hot_write');
            } catch (error) {
              // The transaction goes on without this write, unless SQLite has ended it.
              if (!this.#sqlite.inTransaction) throw error;
              this.#sqlite.exec('rollback to hot_write');
              this.#sqlite.exec('release hot_write');
              failed.set(queued, error);
            }
          }
        })();
        // Settled here, still holding the connection: a writer's next step (a turn delivering its
        // end, giving its slot back) is queued before anyone else can read what was committed.
        for (const queued of group) {
          if (failed.has(queued)) queued.reject(failed.get(queued));
          else queued.resolve();
        }
        return Promise.resolve();
      });
    } catch (error) {
      for (const queued of group) queued.reject(error);
    }
  }
}
