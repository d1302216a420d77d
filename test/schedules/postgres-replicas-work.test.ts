/* eslint-disable @typescript-eslint/no-unsafe-return -- the pollers hand back JSON answers, read loosely like the rest of these assertions */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres-schema.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { getJson, postJson, waitUntil } from '../support/wait-until.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('schedules and background jobs on two replica processes sharing PostgreSQL', () => {
  let schema: PostgresSchema;
  const replicas: ServiceProcess[] = [];
  beforeAll(async () => {
    schema = await createPostgresSchema();
    for (const name of ['replica-a', 'replica-b']) {
      replicas.push(await schema.whileSchemasAreStable(() => startServiceProcess({ instanceId: name, env: { DATABASE_URL: schema.url } })));
    }
  }, 90_000);
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await schema.drop();
  });

  it('fires a check-back 2 s ahead exactly once, on one of the replicas', async () => {
    const [a, b] = replicas;
    if (a === undefined || b === undefined) throw new Error('two replicas expected');
    const created = await postJson(`${a.baseUrl}/schedules`, { agent: { id: 'shared' }, kind: 'once', delaySeconds: 2, prompt: 'look again', model: { script: [{ text: 'looked' }] } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // Both replicas serve it.
    expect((await getJson(`${b.baseUrl}/schedules/${id}`)).body.nextFireAt).toBe(created.body.nextFireAt);
    const fired = await waitUntil('the fire', async () => {
      const record = (await getJson(`${b.baseUrl}/schedules/${id}`)).body;
      return record.fires[0]?.turnId != null ? record : undefined;
    });
    expect(Date.parse(fired.fires[0].at)).toBeGreaterThanOrEqual(Date.parse(created.body.nextFireAt));
    await pause(3_000);
    const after = (await getJson(`${a.baseUrl}/schedules/${id}`)).body;
    expect(after.status).toBe('done');
    expect(after.fires).toHaveLength(1);
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ id: string; owner: string; status: string }>('select id, owner, status from turns where schedule_id = $1', [id]);
      expect(rows).toHaveLength(1);
      expect(['replica-a', 'replica-b']).toContain(rows[0]?.owner);
      expect(rows[0]?.id).toBe(fired.fires[0].turnId);
    } finally {
      await client.end();
    }
    const turn = (await getJson(`${a.baseUrl}/turns/${fired.fires[0].turnId}`)).body;
    expect(turn).toMatchObject({ scheduleId: id, agentId: 'shared' });
  }, 60_000);

  it('stops a job through the replica that does not run it', async () => {
    const [a, b] = replicas;
    if (a === undefined || b === undefined) throw new Error('two replicas expected');
    const created = await postJson(`${a.baseUrl}/background-jobs`, { agent: { id: 'shared-job' }, title: 'Slow', instructions: 'Wait.', model: { script: [{ text: 'never', delayMs: 30_000 }] } });
    const id = created.body.id as string;
    const running = await waitUntil('its first turn', async () => {
      const record = (await getJson(`${b.baseUrl}/background-jobs/${id}`)).body;
      return record.turns.length === 1 ? record : undefined;
    });
    // A job turn is recorded just before it starts: wait until the turn itself runs.
    await waitUntil('the turn to run', async () => ((await getJson(`${a.baseUrl}/turns/${running.turnIds[0]}`)).body.status === 'running' ? true : undefined));
    expect((await postJson(`${b.baseUrl}/background-jobs/${id}/messages`, { text: 'hello from b' })).status).toBe(202);
    const stopped = await postJson(`${b.baseUrl}/background-jobs/${id}/stop`);
    expect(stopped.status).toBe(202);
    const turn = await waitUntil('the turn to be cancelled', async () => {
      const record = (await getJson(`${a.baseUrl}/turns/${running.turnIds[0]}`)).body;
      return record.status === 'running' ? undefined : record;
    }, 10_000);
    expect(turn.status).toBe('cancelled');
    const final = await waitUntil('the job record', async () => {
      const record = (await getJson(`${a.baseUrl}/background-jobs/${id}`)).body;
      return record.turns[0].outcome === 'running' ? undefined : record;
    });
    expect(final).toMatchObject({ status: 'stopped', turnIds: [running.turnIds[0]], turns: [{ outcome: 'stopped' }] });
    expect((await postJson(`${a.baseUrl}/background-jobs/${id}/stop`)).body.error.code).toBe('job_not_running');
  }, 60_000);
});
