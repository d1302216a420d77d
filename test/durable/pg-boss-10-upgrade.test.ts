import { tmpdir } from 'node:os';
import pg from 'pg';
import PgBoss10 from 'pg-boss-10';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import type { DurableJob, DurableQueueOptions, DurableWork } from '../../src/durable/durable-work.js';
import { openDurableWork, pgBoss10SchemaFor, pgBossSchemaFor } from '../../src/durable/open-durable-work.js';
import { openStoreDatabase, openTurnStoreOn, type StoreDatabase } from '../../src/store/open-turn-store.js';
import type { TurnStore } from '../../src/store/turn-store.js';
import { capturingLogger } from '../sandbox/sandbox-support.js';
import { createPostgresSchema, TEST_POSTGRES_URL, type PostgresSchema } from '../support/postgres-schema.js';
import { waitUntil } from '../support/wait-until.js';

const silent = pino({ level: 'silent' });
const plain: DurableQueueOptions = { name: 'plain', policy: 'standard', retryLimit: 3, retryDelaySeconds: 1, backoff: false };
const keyed: DurableQueueOptions = { name: 'keyed', policy: 'stately', retryLimit: 3, retryDelaySeconds: 1, backoff: false };

/** Runs SQL on the test server, outside any store. */
async function query<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * A database as a release on pg-boss 10 left it: the real pg-boss 10.4.2 (installed as the
 * dev dependency `pg-boss-10`) in the schema that release used, with jobs in every state.
 */
async function leaveWorkInPgBoss10(schema: string): Promise<{ ids: { running: string; done: string; waiting: string; later: string; keyed: string } }> {
  const boss = new PgBoss10({ connectionString: TEST_POSTGRES_URL, schema, schedule: false, supervise: false });
  await boss.start();
  try {
    await boss.createQueue('plain', { name: 'plain', policy: 'standard', retryLimit: 3 });
    await boss.createQueue('keyed', { name: 'keyed', policy: 'stately', retryLimit: 3 });
    const send = async (queue: string, data: object, options: PgBoss10.SendOptions = {}): Promise<string> => {
      const id = await boss.send(queue, data, options);
      if (id === null) throw new Error(`pg-boss 10 did not take ${JSON.stringify(data)}`);
      return id;
    };
    // Running when its replica stopped: fetched, never completed.
    const running = await send('plain', { n: 'running' });
    expect((await boss.fetch('plain')).map((job) => job.id)).toEqual([running]);
    // Done already: stays behind.
    const done = await send('plain', { n: 'done' });
    expect((await boss.fetch('plain')).map((job) => job.id)).toEqual([done]);
    await boss.complete('plain', done);
    const ids = {
      running,
      done,
      waiting: await send('plain', { n: 'waiting' }),
      later: await send('plain', { n: 'later' }, { startAfter: new Date(Date.now() + 3_600_000) }),
      keyed: await send('keyed', { run: 'run-1' }, { singletonKey: 'run-1' }),
    };
    return { ids };
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}

describe('upgrading a database that pg-boss 10 ran on', () => {
  let schema: PostgresSchema;
  let database: StoreDatabase;
  let store: TurnStore;
  const opened: DurableWork[] = [];
  const open = async (logger = silent): Promise<DurableWork> => {
    const work = await openDurableWork({ database, databaseUrl: schema.url, superviseSeconds: 1, leaseSeconds: 10, retentionDays: 30, clock: systemClock, logger });
    opened.push(work);
    return work;
  };

  beforeAll(async () => {
    schema = await createPostgresSchema();
    database = await openStoreDatabase({ databaseUrl: schema.url, dataDir: tmpdir() });
    store = await schema.whileSchemasAreStable(() => openTurnStoreOn(database));
  });
  afterAll(async () => {
    await Promise.all(opened.map((work) => work.stop()));
    await store.close();
    await schema.drop();
  });

  it('moves every unfinished job into pg-boss 12 once, even with two replicas starting together, and leaves the old schema as it was', async () => {
    const legacy = pgBoss10SchemaFor(schema.name);
    expect(legacy).toBe(`${schema.name}_pgboss`);
    const { ids } = await leaveWorkInPgBoss10(legacy);
    expect(await query(`SELECT version FROM "${legacy}".version`)).toEqual([{ version: 24 }]);

    const { logger, records } = capturingLogger();
    const [first, second] = await Promise.all([open(logger), open(logger)]);
    await Promise.all([first.defineQueue(plain), second.defineQueue(plain), first.defineQueue(keyed), second.defineQueue(keyed)]);

    const seen: DurableJob[] = [];
    const handler = (job: DurableJob): Promise<void> => {
      seen.push(job);
      return Promise.resolve();
    };
    for (const work of [first, second]) {
      await work.work({ queue: 'plain', concurrency: 2, handler });
      await work.work({ queue: 'keyed', concurrency: 1, handler });
    }
    await waitUntil('the three due jobs', () => (seen.length >= 3 ? true : undefined));
    // One more lease check and poll on both replicas: nothing is delivered twice.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(seen.map((job) => [job.queue, job.id, job.payload, job.attempt]).sort()).toEqual(
      [
        ['keyed', ids.keyed, { run: 'run-1' }, 1],
        ['plain', ids.running, { n: 'running' }, 1],
        ['plain', ids.waiting, { n: 'waiting' }, 1],
      ].sort(),
    );

    // The deferred job kept its time; the stately queue kept its key.
    const moved = await query<{ id: string; name: string; state: string; start_after: Date; singleton_key: string | null }>(
      `SELECT id, name, state, start_after, singleton_key FROM "${pgBossSchemaFor(schema.name)}".job ORDER BY name, id`,
    );
    const later = moved.find((row) => row.id === ids.later);
    expect(later?.state).toBe('created');
    expect(later?.start_after.getTime()).toBeGreaterThan(Date.now() + 3_000_000);
    expect(moved.find((row) => row.id === ids.keyed)?.singleton_key).toBe('run-1');
    expect(moved.filter((row) => row.id === ids.done)).toEqual([]);

    // The old schema: nothing unfinished is left, what was done stays, and it is still pg-boss 10's.
    expect(await query(`SELECT id, state FROM "${legacy}".job WHERE name IN ('plain', 'keyed') ORDER BY id`)).toEqual([{ id: ids.done, state: 'completed' }]);
    expect(await query(`SELECT version FROM "${legacy}".version`)).toEqual([{ version: 24 }]);
    expect(records().map((record) => record.msg)).toContain(
      `pg-boss 10's schema ${legacy} found: each queue's waiting jobs move into ${pgBossSchemaFor(schema.name)} as the queue starts; drop ${legacy} once no older replica runs`,
    );
    const movedCounts = records()
      .filter((record) => typeof record['moved'] === 'number')
      .map((record) => [record['queue'], record['moved']]);
    expect(movedCounts.sort()).toEqual([
      ['keyed', 1],
      ['plain', 3],
    ]);
  });

  it('refuses to change a queue’s policy, naming the one it has', async () => {
    const work = await open();
    await expect(work.defineQueue({ ...plain, policy: 'stately' })).rejects.toThrow("the durable queue plain has the policy standard, not stately; a queue's policy cannot change");
  });
});
