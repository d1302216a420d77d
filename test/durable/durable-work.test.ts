import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import type { DurableJob, DurableQueueOptions, DurableWork } from '../../src/durable/durable-work.js';
import { openDurableWork } from '../../src/durable/open-durable-work.js';
import { transactionWithJobs } from '../../src/durable/transaction-with-jobs.js';
import { openStoreDatabase, openTurnStoreOn, type StoreDatabase } from '../../src/store/open-turn-store.js';
import type { TurnStore } from '../../src/store/turn-store.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres-schema.js';

const logger = pino({ level: 'silent' });

interface Backend {
  readonly name: string;
  readonly database: StoreDatabase;
  /** The lease each replica's jobs hold: short on SQLite, pg-boss's shortest heartbeat on PostgreSQL. */
  readonly leaseSeconds: number;
  /** Opens one "replica": its own durable work over the shared database. */
  replica(): Promise<DurableWork>;
  close(): Promise<void>;
}

async function sqliteBackend(): Promise<Backend> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'durable-sqlite-'));
  const database = await openStoreDatabase({ databaseUrl: undefined, dataDir });
  const store = await openTurnStoreOn(database);
  return backendOver({ name: 'sqlite', database, store, databaseUrl: undefined, leaseSeconds: 2, cleanup: () => rm(dataDir, { recursive: true, force: true }) });
}

async function postgresBackend(): Promise<Backend> {
  const schema: PostgresSchema = await createPostgresSchema();
  const database = await openStoreDatabase({ databaseUrl: schema.url, dataDir: tmpdir() });
  const store = await schema.whileSchemasAreStable(() => openTurnStoreOn(database));
  return backendOver({ name: 'postgres', database, store, databaseUrl: schema.url, leaseSeconds: 10, cleanup: () => schema.drop() });
}

function backendOver(options: { name: string; database: StoreDatabase; store: TurnStore; databaseUrl: string | undefined; leaseSeconds: number; cleanup: () => Promise<void> }): Backend {
  const opened: DurableWork[] = [];
  return {
    name: options.name,
    database: options.database,
    leaseSeconds: options.leaseSeconds,
    async replica() {
      const work = await openDurableWork({ database: options.database, databaseUrl: options.databaseUrl, superviseSeconds: 1, leaseSeconds: options.leaseSeconds, retentionDays: 30, clock: systemClock, logger });
      opened.push(work);
      return work;
    },
    async close() {
      await Promise.all(opened.map((work) => work.stop()));
      await options.store.close();
      await options.cleanup();
    },
  };
}

const queue = (name: string, overrides: Partial<DurableQueueOptions> = {}): DurableQueueOptions => ({
  name,
  policy: 'standard',
  retryLimit: 3,
  retryDelaySeconds: 1,
  backoff: false,
  ...overrides,
});

function record<T>(into: T[], item: T): Promise<void> {
  into.push(item);
  return Promise.resolve();
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each([
  ['SQLite (in-process runner)', sqliteBackend],
  ['PostgreSQL (pg-boss)', postgresBackend],
])('durable work on %s', (_name, open) => {
  const backends: Backend[] = [];
  afterAll(async () => {
    await Promise.all(backends.map((backend) => backend.close()));
  });
  const start = async () => {
    const backend = await open();
    backends.push(backend);
    return backend;
  };

  it('delivers each job once with its payload, a stately queue dropping a second waiting job of a key', async () => {
    const backend = await start();
    const work = await backend.replica();
    await work.defineQueue(queue('plain'));
    await work.defineQueue(queue('keyed', { policy: 'stately' }));
    const seen: DurableJob[] = [];
    const ids = await Promise.all([1, 2, 3, 4, 5].map((n) => work.enqueue({ queue: 'plain', payload: { n } })));
    expect(ids.every((id) => typeof id === 'string')).toBe(true);
    expect(await work.enqueue({ queue: 'keyed', payload: { first: true }, singletonKey: 'run-1' })).toEqual(expect.any(String));
    expect(await work.enqueue({ queue: 'keyed', payload: { first: false }, singletonKey: 'run-1' })).toBeNull();
    await work.work({ queue: 'plain', concurrency: 2, handler: (job) => record(seen, job) });
    await work.work({ queue: 'keyed', concurrency: 1, handler: (job) => record(seen, job) });
    await until(() => seen.length === 6, 'six deliveries');
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(seen).toHaveLength(6);
    expect(seen.filter((job) => job.queue === 'plain').map((job) => job.payload['n']).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(seen.find((job) => job.queue === 'keyed')?.payload).toEqual({ first: true });
    expect(seen.every((job) => job.attempt === 1)).toBe(true);
  });

  it('keeps a job enqueued in a store transaction only if that transaction commits, and shows it to workers only then', async () => {
    const backend = await start();
    const work = await backend.replica();
    await work.defineQueue(queue('outbox'));
    await work.defineQueue(queue('outbox-keyed', { policy: 'stately' }));
    const seen: DurableJob[] = [];
    await work.work({ queue: 'outbox', concurrency: 2, handler: (job) => record(seen, job) });
    await work.work({ queue: 'outbox-keyed', concurrency: 1, handler: (job) => record(seen, job) });
    const { db } = backend.database;
    await expect(
      db.transaction().execute(async (trx) => {
        await work.enqueue({ queue: 'outbox', payload: { kept: false } }, trx);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    const kept = await transactionWithJobs({ db, durable: work }, async (_trx, enqueue) => {
      const id = await enqueue({ queue: 'outbox', payload: { kept: true } });
      expect(await enqueue({ queue: 'outbox-keyed', payload: { key: 'first' }, singletonKey: 'k' })).toEqual(expect.any(String));
      expect(await enqueue({ queue: 'outbox-keyed', payload: { key: 'second' }, singletonKey: 'k' })).toBeNull();
      // Longer than a poll: no worker may see a job its transaction has not committed.
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(seen).toEqual([]);
      return id;
    });
    await until(() => seen.length === 2, 'the two committed jobs');
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(seen.map((job) => job.payload)).toEqual(expect.arrayContaining([{ kept: true }, { key: 'first' }]));
    expect(seen).toHaveLength(2);
    expect(seen.find((job) => job.queue === 'outbox')?.id).toBe(kept);
  });

  it('retries a handler that throws, with the attempt number, until it succeeds', async () => {
    const backend = await start();
    const work = await backend.replica();
    await work.defineQueue(queue('flaky', { retryLimit: 3, retryDelaySeconds: 1, backoff: true }));
    const attempts: number[] = [];
    await work.work({
      queue: 'flaky',
      concurrency: 1,
      handler: (job) => {
        attempts.push(job.attempt);
        return attempts.length < 3 ? Promise.reject(new Error('not yet')) : Promise.resolve();
      },
    });
    await work.enqueue({ queue: 'flaky', payload: {} });
    await until(() => attempts.length === 3, 'three attempts');
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('gives up after the retry limit', async () => {
    const backend = await start();
    const work = await backend.replica();
    await work.defineQueue(queue('doomed', { retryLimit: 1, retryDelaySeconds: 1 }));
    let attempts = 0;
    await work.work({ queue: 'doomed', concurrency: 1, handler: () => {
      attempts += 1;
      return Promise.reject(new Error('always'));
    } });
    await work.enqueue({ queue: 'doomed', payload: {} });
    await until(() => attempts === 2, 'two attempts');
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(attempts).toBe(2);
  });

  it('holds a job with runAt until then, while a later job runs first', async () => {
    const backend = await start();
    const work = await backend.replica();
    await work.defineQueue(queue('timed'));
    const delivered = new Map<string, number>();
    // Checked against the clock, not against how fast a loaded machine gets round to them: one
    // job is due in an hour (never, in this test), one in two seconds, one now.
    const laterAt = Date.now() + 2_000;
    await work.enqueue({ queue: 'timed', payload: { name: 'held' }, runAt: new Date(Date.now() + 3_600_000) });
    await work.enqueue({ queue: 'timed', payload: { name: 'later' }, runAt: new Date(laterAt) });
    await work.enqueue({ queue: 'timed', payload: { name: 'now' } });
    await work.work({ queue: 'timed', concurrency: 2, handler: (job) => {
      delivered.set(job.payload['name'] as string, Date.now());
      return Promise.resolve();
    } });
    await until(() => delivered.size === 2, 'the two due jobs');
    expect([...delivered.keys()].sort()).toEqual(['later', 'now']);
    expect(delivered.get('later')).toBeGreaterThanOrEqual(laterAt);
  });

  it('runs at most `concurrency` handlers of a queue at once in a worker', async () => {
    const backend = await start();
    const work = await backend.replica();
    await work.defineQueue(queue('bounded'));
    let running = 0;
    let peak = 0;
    let done = 0;
    await work.work({
      queue: 'bounded',
      concurrency: 3,
      handler: async () => {
        running += 1;
        peak = Math.max(peak, running);
        // The first handlers hold their slots until three run at once, so the peak does not depend
        // on how fast a loaded machine claims jobs (a worker that ran fewer at once never gets there).
        await until(() => peak >= 3, 'three handlers at once');
        await new Promise((resolve) => setTimeout(resolve, 300));
        running -= 1;
        done += 1;
      },
    });
    for (let n = 0; n < 9; n += 1) await work.enqueue({ queue: 'bounded', payload: { n } });
    await until(() => done === 9, 'nine jobs');
    expect(peak).toBe(3);
  });

  it.concurrent('takes over, within a lease and a supervise pass, a job whose replica stopped renewing it', async () => {
    const backend = await start();
    const dead = await backend.replica();
    await dead.defineQueue(queue('leased', { retryLimit: 5, retryDelaySeconds: 1 }));
    let deadStarted = false;
    // This replica's handler never finishes; its runner then stops (and so stops renewing the
    // lease), as when its process dies.
    await dead.work({ queue: 'leased', concurrency: 1, handler: () => {
      deadStarted = true;
      return new Promise<void>(() => undefined);
    } });
    await dead.enqueue({ queue: 'leased', payload: { what: 'takeover' } });
    await until(() => deadStarted, 'the first replica to start the job');
    await dead.stop();
    const stoppedAt = performance.now();

    const alive = await backend.replica();
    await alive.defineQueue(queue('leased', { retryLimit: 5, retryDelaySeconds: 1 }));
    const taken: DurableJob[] = [];
    await alive.work({ queue: 'leased', concurrency: 1, handler: (job) => record(taken, job) });
    await until(() => taken.length === 1, 'the second replica to take the job over', 30_000);
    expect(taken[0]?.payload).toEqual({ what: 'takeover' });
    expect(taken[0]?.attempt).toBeGreaterThan(1);
    // Not before the lease ran out: the first replica had renewed it until it stopped.
    expect(performance.now() - stoppedAt).toBeGreaterThan(backend.leaseSeconds * 1000 - 5_000);
  }, 60_000);

  it.concurrent('keeps a job whose handler outlives its lease with that handler, renewing the lease, while another replica waits', async () => {
    const backend = await start();
    const first = await backend.replica();
    const second = await backend.replica();
    const long = queue('long', { retryLimit: 5, retryDelaySeconds: 1 });
    await first.defineQueue(long);
    await second.defineQueue(long);
    const runs: { replica: string; attempt: number }[] = [];
    let finished = 0;
    const handler = (replica: string) => async (job: DurableJob) => {
      runs.push({ replica, attempt: job.attempt });
      await new Promise((resolve) => setTimeout(resolve, backend.leaseSeconds * 2_500));
      finished += 1;
    };
    await first.work({ queue: 'long', concurrency: 1, handler: handler('first') });
    await first.enqueue({ queue: 'long', payload: {} });
    await until(() => runs.length === 1, 'the first replica to start the job');
    await second.work({ queue: 'long', concurrency: 1, handler: handler('second') });
    await until(() => finished === 1, 'the long handler to finish', 60_000);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(runs).toEqual([{ replica: 'first', attempt: 1 }]);
  }, 90_000);
});
