import { parentPort, type MessagePort } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { moduleWorkerData } from '../concurrency/spawn-module-worker.js';
import { STOP_CHECKPOINTING, type CheckpointWorkerData, type CheckpointWorkerReport } from './sqlite-checkpointer.js';

/*
 * The thread that checkpoints the store's SQLite WAL (see sqlite-checkpointer.ts): a connection
 * of its own to the same file, which every so often copies what has been committed to the WAL
 * into the database. PASSIVE: it never waits for, nor holds up, the service's reads and writes.
 * When it cannot go on, it says why and ends; the service then checkpoints for itself.
 */

function ownPort(): MessagePort {
  if (parentPort === null) throw new Error('sqlite-checkpoint-worker runs as a worker thread');
  return parentPort;
}

const port = ownPort();
const report = (message: CheckpointWorkerReport): void => {
  port.postMessage(message);
};
const describe = (error: unknown): string => (error instanceof Error ? `${error.message}${'code' in error ? ` (${String(error.code)})` : ''}` : String(error));

/** `pragma wal_checkpoint`'s row: whether it could not run, the WAL's frames, and how many of them are in the database. */
interface CheckpointResult {
  readonly busy: number;
  readonly log: number;
  readonly checkpointed: number;
}

/** Passes in one go, while commits keep coming during each (see below). */
const MAX_PASSES = 4;

const { file, intervalMs } = moduleWorkerData() as CheckpointWorkerData;
let database: BetterSqlite3.Database | undefined;
let timer: NodeJS.Timeout | undefined;

function end(): void {
  clearInterval(timer);
  database?.close();
  port.close();
}

try {
  const opened = new BetterSqlite3(file, { fileMustExist: true });
  database = opened;
  const checkpoint = opened.prepare<[], CheckpointResult>('pragma wal_checkpoint(PASSIVE)');
  timer = setInterval(() => {
    try {
      // A pass copies what was committed when it began; a commit during it leaves the WAL not
      // wholly copied, and only a wholly copied WAL starts again from its beginning. The next
      // pass has only those commits to copy, so it is short, and likelier to end between two.
      for (let pass = 0; pass < MAX_PASSES; pass += 1) {
        const result = checkpoint.get();
        if (result === undefined || result.busy !== 0 || result.checkpointed >= result.log) break;
      }
    } catch (error) {
      report({ type: 'failed', message: describe(error) });
      end();
    }
  }, intervalMs);
  port.on('message', (message) => {
    if (message === STOP_CHECKPOINTING) end();
  });
  report({ type: 'ready' });
} catch (error) {
  report({ type: 'failed', message: describe(error) });
  end();
}
