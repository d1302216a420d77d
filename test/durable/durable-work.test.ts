import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import type { DurableJob, DurableQueueOptions, DurableWork } from '../../src/durable/durable-work.js';
import { openDurableWork } from '../../src/durable/open-durable-work.js';
import { openStoreDatabase, openTurnStoreOn, type StoreDatabase } from '../../src/store/open-turn-store.js';
import type { TurnStore } from '../../src/store/turn-store.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres-schema.js';

const logger = pino({ level: 'silent' });

interface Backend {
  readonly name: string;
  /** Opens one "replica": its own durable work over the shared database. */
  replica(): Promise<DurableWork>;
  close(): Promise<void>;
}

async function sqliteBackend(): Promise<Backend> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'durable-sqlite-'));
  const database = await openStoreDatabase({ databaseUrl: undefined, dataDir });
  const store = await openTurnStoreOn(database);
  return backendOver({ name: 'sqlite', database, store, databaseUrl: undefined, cleanup: () => rm(dataDir, { recursive: true, force: true }) });
}

async function postgresBackend(): Promise<Backend> {
  const schema: PostgresSchema = await createPostgresSchema();
  const database = await openStoreDatabase({ databaseUrl: schema.url, dataDir: tmpdir() });
  const store = await schema.whileSchemasAreStable(() => openTurnStoreOn(database));
  return backendOver({ name: 'postgres', database, store, databaseUrl: schema.url, cleanup: () => schema.drop() });
}

function backendOver(options: { name: string; database: StoreDatabase; store: TurnStore; databaseUrl: string | undefined; cleanup: () => Promise<void> }): Backend {
  const opened: DurableWork[] = [];
  return {
    name: options.name,
    async replica() {
      const work = await openDurableWork({ database: options.database, databaseUrl: options.databaseUrl, superviseSeconds: 1, clock: systemClock, logger });
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
  leaseSeconds: 60,
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

  it("takes over a job whose replica stopped answering once its lease runs out", async () => {
    const backend = await start();
    const dead = await backend.replica();
    await dead.defineQueue(queue('leased', { leaseSeconds: 1, retryLimit: 5, retryDelaySeconds: 1 }));
    let deadStarted = false;
    // This replica's handler never finishes, as if its process had frozen or died.
    await dead.work({ queue: 'leased', concurrency: 1, handler: () => {
      deadStarted = true;
      return new Promise<void>(() => undefined);
    } });
    await dead.enqueue({ queue: 'leased', payload: { what: 'takeover' } });
    await until(() => deadStarted, 'the first replica to start the job');

    const alive = await backend.replica();
    await alive.defineQueue(queue('leased', { leaseSeconds: 1, retryLimit: 5, retryDelaySeconds: 1 }));
    const taken: DurableJob[] = [];
    await alive.work({ queue: 'leased', concurrency: 1, handler: (job) => record(taken, job) });
    await until(() => taken.length === 1, 'the second replica to take the job over', 30_000);
    expect(taken[0]?.payload).toEqual({ what: 'takeover' });
    expect(taken[0]?.attempt).toBeGreaterThan(1);
  });
});
