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
  /**
   * better-sqlite3 transaction functions, their statements prepared once: the group's
   * transaction, and each write's, which run inside it becomes a savepoint (rolled back alone
   * when the write throws).
   */
  readonly #commitGroup: BetterSqlite3.Transaction<(group: readonly QueuedWrite[], failed: Map<QueuedWrite, unknown>) => void>;
  #queued: QueuedWrite[] = [];

  constructor(db: Kysely<Database>, sqlite: BetterSqlite3.Database) {
    this.#db = db;
    const inSavepoint = sqlite.transaction((write: () => void) => {
      write();
    });
    this.#commitGroup = sqlite.transaction((group: readonly QueuedWrite[], failed: Map<QueuedWrite, unknown>) => {
      for (const queued of group) {
        try {
          inSavepoint(queued.write);
        } catch (error) {
          // The transaction goes on without this write, unless SQLite has ended it.
          if (!sqlite.inTransaction) throw error;
          failed.set(queued, error);
        }
      }
    });
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
        this.#commitGroup(group, failed);
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
