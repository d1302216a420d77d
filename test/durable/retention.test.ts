import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { PRUNE_BATCH, Retention } from '../../src/durable/retention.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres-schema.js';
import { startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { getJson, postJson, waitUntil } from '../support/wait-until.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type WebhookReceiver } from '../support/webhook-receiver.js';
import { submitting, waitForRun } from '../workflows/workflow-kit.js';

const DAY_MS = 86_400_000;

/** Runs SQL on the runtime's store from outside it: its SQLite file, or its PostgreSQL schema. */
interface StoreSql {
  run(statement: string, parameters?: unknown[]): Promise<void>;
  count(table: string, where?: string, parameters?: unknown[]): Promise<number>;
  close(): Promise<void>;
}

async function storeSql(runtime: TestRuntime, schema: PostgresSchema | undefined): Promise<StoreSql> {
  if (schema === undefined) {
    const sqlite = new BetterSqlite3(path.join(runtime.dataDir, 'turns.sqlite'));
    sqlite.pragma('busy_timeout = 5000');
    return {
      run: (statement, parameters = []) => Promise.resolve(void sqlite.prepare(statement).run(...parameters)),
      count: (table, where = '1 = 1', parameters = []) => Promise.resolve((sqlite.prepare(`select count(*) as n from ${table} where ${where}`).get(...parameters) as { n: number }).n),
      close: () => Promise.resolve(void sqlite.close()),
    };
  }
  const client = new pg.Client({ connectionString: schema.url });
  await client.connect();
  // PostgreSQL placeholders are $1, $2 …; the statements below are written with ?.
  const numbered = (statement: string) => {
    let index = 0;
    return statement.replaceAll('?', () => `$${String((index += 1))}`);
  };
  return {
    run: async (statement, parameters = []) => {
      await client.query(numbered(statement), parameters);
    },
    count: async (table, where = '1 = 1', parameters = []) => Number((await client.query<{ n: string }>(numbered(`select count(*) as n from ${table} where ${where}`), parameters)).rows[0]?.n ?? 0),
    close: () => client.end(),
  };
}

/**
 * `RETENTION_DAYS`: finished durable work older than that is pruned by a periodic durable job,
 * in bounded batches, on SQLite and on PostgreSQL; work still within its days, and work still
 * running, stays.
 */
describe.each(['SQLite', 'PostgreSQL'] as const)('retention on %s', (storeName) => {
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  async function start(env: Record<string, string> = {}): Promise<{ runtime: TestRuntime; receiver: WebhookReceiver; sql: StoreSql }> {
    const receiver = await startWebhookReceiver();
    closers.push(() => receiver.close());
    let schema: PostgresSchema | undefined;
    if (storeName === 'PostgreSQL') {
      schema = await createPostgresSchema();
      const made = schema;
      closers.push(() => made.drop());
    }
    const fullEnv = { WEBHOOK_SECRET: TEST_WEBHOOK_SECRET, WEB_FETCH_ALLOW_HOSTS: receiver.host, ...(schema === undefined ? {} : { DATABASE_URL: schema.url, DURABLE_SUPERVISE_SECONDS: '1' }), ...env };
    const runtime = schema === undefined ? await startTestRuntime({ env: fullEnv }) : await schema.whileSchemasAreStable(() => startTestRuntime({ env: fullEnv }));
    closers.push(() => runtime.close());
    const sql = await storeSql(runtime, schema);
    closers.push(() => sql.close());
    return { runtime, receiver, sql };
  }

  it('prunes ended runs, jobs, fires, webhook attempts and outbox rows past RETENTION_DAYS, and keeps the rest', async () => {
    const { runtime, receiver, sql } = await start();
    const base = runtime.baseUrl;
    const webhook = { url: receiver.url };
    const workflow = (title: string) => postJson(`${base}/workflows`, { agent: { id: 'kept' }, title, script: "return await agent('one', { label: 'work' });", model: { tasks: { work: submitting('done') } }, webhook });
    const job = (title: string) => postJson(`${base}/background-jobs`, { agent: { id: 'kept' }, title, instructions: 'Answer.', model: { script: [{ text: 'answered' }] }, webhook });

    const [oldRun, newRun] = await Promise.all([workflow('old'), workflow('new')]);
    const [oldJob, newJob] = await Promise.all([job('old'), job('new')]);
    const schedule = await postJson(`${base}/schedules`, { agent: { id: 'kept' }, kind: 'once', delaySeconds: 1, prompt: 'fire', model: { script: [{ text: 'fired' }] } });
    const turnAnswer = await fetch(`${base}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ agent: { id: 'kept-turns' }, input: 'hi', model: { script: [{ text: 'hello' }] }, webhook }),
    });
    expect(turnAnswer.status).toBe(200);
    const turn = { body: (await turnAnswer.json()) as { id: string } };
    for (const run of [oldRun, newRun]) expect((await waitForRun(base, run.body.id)).status).toBe('completed');
    for (const made of [oldJob, newJob]) await waitUntil('the job to end', async () => ((await getJson(`${base}/background-jobs/${made.body.id}`)).body.status === 'completed' ? true : undefined));
    await waitUntil('the fire', async () => ((await getJson(`${base}/schedules/${schedule.body.id}`)).body.fires.some((fire: { outcome: string }) => fire.outcome === 'started') ? true : undefined));
    // Two runs, two jobs and the turn each sent their webhook.
    await waitUntil('five webhooks', () => (receiver.received.length >= 5 ? true : undefined));
    await waitUntil('the turn webhook queued', async () => ((await sql.count('turn_webhooks', 'enqueued_at is not null')) === 1 ? true : undefined));

    // The "old" work ended 40 days ago; the rest stays as it is.
    const longAgo = new Date(Date.now() - 40 * DAY_MS).toISOString();
    await sql.run('update workflow_runs set finished_at = ? where id = ?', [longAgo, oldRun.body.id]);
    await sql.run('update background_jobs set finished_at = ? where id = ?', [longAgo, oldJob.body.id]);
    await sql.run('update schedule_fires set at = ?', [longAgo]);
    await sql.run("update webhook_attempts set at = ? where subject_id in (?, ?, ?)", [longAgo, oldRun.body.id, oldJob.body.id, turn.body.id]);
    await sql.run('update turn_webhooks set enqueued_at = ?', [longAgo]);
    if (storeName === 'SQLite') await sql.run("update durable_jobs set finished_at = ? where state = 'completed' and queue = 'workflow-task'", [longAgo]);
    const attemptsBefore = await sql.count('webhook_attempts');

    const oldRunEvents = await sql.count('workflow_events', 'run_id = ?', [oldRun.body.id]);
    const oldJobEvents = await sql.count('background_job_events', 'job_id = ?', [oldJob.body.id]);

    // Each part says the rows of its largest batch (a run's or job's events outnumber it).
    const { deleted, more } = await runtime.retention.prune();
    expect(more).toBe(false);
    expect(deleted).toMatchObject({ workflowRuns: oldRunEvents, backgroundJobs: oldJobEvents, scheduleFires: 1, webhookAttempts: 3, turnWebhooks: 1 });
    expect(deleted['durableJobs']).toBe(storeName === 'SQLite' ? 2 : 0);

    expect((await getJson(`${base}/workflows/${oldRun.body.id}`)).status).toBe(404);
    expect((await getJson(`${base}/workflows/${newRun.body.id}`)).body.status).toBe('completed');
    expect(await sql.count('workflow_events', 'run_id = ?', [oldRun.body.id])).toBe(0);
    expect(await sql.count('workflow_tasks', 'run_id = ?', [oldRun.body.id])).toBe(0);
    expect(await sql.count('workflow_events', 'run_id = ?', [newRun.body.id])).toBeGreaterThan(0);
    expect((await getJson(`${base}/background-jobs/${oldJob.body.id}`)).status).toBe(404);
    expect((await getJson(`${base}/background-jobs/${newJob.body.id}`)).body.status).toBe('completed');
    expect(await sql.count('background_job_events', 'job_id = ?', [oldJob.body.id])).toBe(0);
    expect(await sql.count('background_job_turns', 'job_id = ?', [oldJob.body.id])).toBe(0);
    expect((await getJson(`${base}/schedules/${schedule.body.id}`)).body.fires).toEqual([]);
    expect(await sql.count('webhook_attempts')).toBe(attemptsBefore - 3);
    expect(await sql.count('turn_webhooks')).toBe(0);
    // Turns are not durable work: the turn stays.
    expect((await getJson(`${base}/turns/${turn.body.id}`)).status).toBe(200);

    // Nothing more to do: a second pass deletes nothing.
    expect(Object.values((await runtime.retention.prune()).deleted).every((count) => count === 0)).toBe(true);
  }, 120_000);

  it('prunes in passes of bounded batches, the next pass at once while more is left and later when done; RETENTION_DAYS=0 keeps all', async () => {
    const { runtime, sql } = await start({ RETENTION_DAYS: '0' });
    // With 0 the service queues no prune at all.
    if (storeName === 'SQLite') expect(await sql.count('durable_jobs', "queue = 'retention-prune'")).toBe(0);
    expect((await runtime.retention.prune()).deleted).toEqual({});

    // A retention of our own on the same durable work: a part with 45 full batches left.
    const calls: { at: number; limit: number }[] = [];
    const retention = new Retention({
      durable: runtime.durable,
      days: 1,
      intervalMs: 2_000,
      clock: systemClock,
      logger: pino({ level: 'silent' }),
      pruners: [
        {
          name: 'probe',
          prune: ({ limit }) => {
            calls.push({ at: Date.now(), limit });
            return Promise.resolve(calls.length <= 45 ? PRUNE_BATCH : 3);
          },
        },
      ],
    });
    await retention.start();
    // First pass: 40 batches (its cap), more left, so the next pass at once: 5 full batches and a short one.
    await waitUntil('two passes', () => (calls.length >= 46 ? true : undefined), 30_000);
    expect(calls.every((call) => call.limit === PRUNE_BATCH)).toBe(true);
    // Then a pass each interval, not sooner.
    await waitUntil('a later pass', () => (calls.length >= 47 ? true : undefined), 30_000);
    expect((calls[46]?.at ?? 0) - (calls[45]?.at ?? 0)).toBeGreaterThanOrEqual(1_500);
  }, 90_000);
});
