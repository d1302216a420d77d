import type BetterSqlite3 from 'better-sqlite3';
import { spawnModuleWorker } from '../concurrency/spawn-module-worker.js';

/** What the checkpoint worker is started with. */
export interface CheckpointWorkerData {
  readonly file: string;
  readonly intervalMs: number;
}

/** What the checkpoint worker says: that it checkpoints from now on, or why it stopped. */
export type CheckpointWorkerReport = { readonly type: 'ready' } | { readonly type: 'failed'; readonly message: string };

/** The message that has the worker close its connection and end. */
export const STOP_CHECKPOINTING = 'stop';

/** SQLite's own: a connection checkpoints once the WAL holds this many pages. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;
/** How long a stop waits for the worker to close its connection before terminating it. */
const STOP_GRACE_MS = 5_000;

export interface SqliteCheckpointer {
  /** Resolves once the thread checkpoints; rejects if it failed before that. */
  readonly ready: Promise<void>;
  /** Ends the thread (its connection closed); the service's connection checkpoints for itself again. */
  stop(): Promise<void>;
}

/**
 * Moves the WAL's checkpoints off the event loop. In WAL mode the connection that commits also
 * checkpoints, once the WAL holds 1,000 pages: it copies them into the database file and syncs
 * both, in the middle of a commit on the service's one thread. Under the turn bench, with no
 * checkpoints at all the service did 8–10% more turns per second. A worker thread with its own
 * connection to the file now checkpoints every `intervalMs`, PASSIVE, so it never waits for the
 * service's reads or writes, nor they for it; each time it has copied the whole WAL, the next
 * commit starts the WAL from its beginning again.
 *
 * The service's connection keeps a backstop: it checkpoints itself once the WAL holds
 * `backstopPages`, which it reaches only when the thread falls behind (and then it copies what
 * the thread has not). If the thread fails or exits, the connection goes back to SQLite's own
 * threshold and `onFailure` is told: the WAL stays bounded either way.
 */
export function startSqliteCheckpointer(options: {
  readonly database: BetterSqlite3.Database;
  readonly intervalMs?: number;
  readonly backstopPages?: number;
  readonly onFailure: (error: Error) => void;
}): SqliteCheckpointer {
  const { database } = options;
  const data: CheckpointWorkerData = { file: database.name, intervalMs: options.intervalMs ?? 100 };
  const worker = spawnModuleWorker(import.meta.url, 'sqlite-checkpoint-worker', { data });
  // The service's own handles keep the process alive; this thread never does.
  worker.unref();
  database.pragma(`wal_autocheckpoint = ${options.backstopPages ?? 10_000}`);
  let ended = false;
  const checkpointHere = (): void => {
    if (database.open) database.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
  };
  let settleReady: { resolve: () => void; reject: (error: Error) => void } | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    settleReady = { resolve, reject };
  });
  // Nobody has to wait for it.
  ready.catch(() => undefined);
  const fail = (error: Error): void => {
    settleReady?.reject(error);
    if (ended) return;
    ended = true;
    checkpointHere();
    options.onFailure(error);
  };
  worker.on('message', (message: CheckpointWorkerReport) => {
    if (message.type === 'ready') settleReady?.resolve();
    else fail(new Error(`the SQLite checkpoint thread stopped: ${message.message}`));
  });
  // What a worker throws need not be an Error (the types say unknown since Node 24's).
  worker.on('error', (error: unknown) => {
    fail(new Error(`the SQLite checkpoint thread failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
  });
  worker.on('exit', (code) => {
    fail(new Error(`the SQLite checkpoint thread exited with code ${code}`));
  });
  return {
    ready,
    async stop() {
      if (ended) return;
      ended = true;
      checkpointHere();
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.postMessage(STOP_CHECKPOINTING);
      const grace = setTimeout(() => void worker.terminate(), STOP_GRACE_MS);
      try {
        await exited;
      } finally {
        clearTimeout(grace);
      }
    },
  };
}
