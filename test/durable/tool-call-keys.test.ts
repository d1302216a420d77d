import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres-schema.js';
import { startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

const schemas: PostgresSchema[] = [];

/** A runtime on SQLite, or on a fresh PostgreSQL schema. */
const STORES: [string, () => Promise<TestRuntime>][] = [
  ['SQLite', () => startTestRuntime()],
  [
    'PostgreSQL',
    async () => {
      const schema = await createPostgresSchema();
      schemas.push(schema);
      return schema.whileSchemasAreStable(() => startTestRuntime({ env: { DATABASE_URL: schema.url } }));
    },
  ],
];

/**
 * Work a tool call starts is keyed by (turn id, call id): the same call made again (at once, or
 * racing) gets the same workflow, background job or schedule; the same call id in another turn
 * (the scripted model's ids repeat from turn to turn) gets its own.
 */
describe.each(STORES)('work started by tool calls on %s', (_store, open) => {
  const runtimes: TestRuntime[] = [];
  afterAll(async () => {
    for (const runtime of runtimes) await runtime.close();
    await Promise.all(schemas.splice(0).map((schema) => schema.drop()));
  });

  it('is one workflow, job and schedule per (turn, call), and another one for the same call id in another turn', async () => {
    const runtime = await open();
    runtimes.push(runtime);
    const agent = { id: 'keyed' };
    const workflow = (turnId: string) =>
      runtime.workflows.startRun({ agent, title: 'Keyed', script: 'return 1;', model: { tasks: {} }, source: { turnId, callId: 'call_1' } }).then(({ record }) => record.id);
    const job = (turnId: string) =>
      runtime.backgroundJobs.create({ request: { agent, model: { script: [{ text: 'ok' }] } }, title: 'Keyed', instructions: 'Answer.', sourceTurnId: turnId, sourceCallId: 'call_1' }).then(({ record }) => record.id);
    const schedule = (turnId: string) =>
      runtime.schedules
        .create({ request: { agent, model: { script: [{ text: 'ok' }] } }, kind: 'once', delaySeconds: 3_600, prompt: 'later', sourceTurnId: turnId, sourceCallId: 'call_1' })
        .then(({ record }) => record.id);
    for (const start of [workflow, job, schedule]) {
      const first = await start('turn_a');
      expect(await start('turn_a')).toBe(first);
      const raced = await Promise.all([start('turn_b'), start('turn_b'), start('turn_b')]);
      expect(new Set(raced).size).toBe(1);
      expect(raced[0]).not.toBe(first);
    }
    expect((await runtime.workflows.listRuns({ agentId: 'keyed', limit: 10 })).length).toBe(2);
    expect((await runtime.backgroundJobs.list({ agentId: 'keyed', limit: 10 })).length).toBe(2);
    expect((await runtime.schedules.list({ agentId: 'keyed' })).map((record) => record.sourceCallId)).toEqual(['call_1', 'call_1']);
  });
});
