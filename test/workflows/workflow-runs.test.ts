import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres-schema.js';
import { startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { FAN_OUT_SCRIPT, peakOverlap, postWorkflow, runEvents, submitting, waitForRun } from './workflow-kit.js';

const items = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'];

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
])('a workflow on %s', (_name, postgres) => {
  const runtimes: TestRuntime[] = [];
  const schemas: PostgresSchema[] = [];
  afterAll(async () => {
    await Promise.all(runtimes.map((runtime) => runtime.close()));
    await Promise.all(schemas.map((schema) => schema.drop()));
  });

  it('runs 12 tasks with Promise.all and a sequential tail to the right result, within its concurrency', async () => {
    let env: Record<string, string> = {};
    if (postgres) {
      const schema = await createPostgresSchema();
      schemas.push(schema);
      env = { DATABASE_URL: schema.url };
    }
    const schema = schemas[0];
    const runtime = postgres && schema !== undefined ? await schema.whileSchemasAreStable(() => startTestRuntime({ env })) : await startTestRuntime({ env });
    runtimes.push(runtime);
    // Each task thinks for 500 ms, so tasks started together overlap even when a loaded machine
    // starts them some way apart.
    const started = await postWorkflow(runtime.baseUrl, {
      title: 'Fan out',
      script: FAN_OUT_SCRIPT,
      args: { items },
      concurrency: 3,
      model: { tasks: { '*': submitting('found {{label}}', 500), tail2: submitting('{{prompt}}!') } },
    });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ status: 'running', concurrency: 3, maxAgentCalls: 256 });
    const run = await waitForRun(runtime.baseUrl, started.body.id);
    expect(run.status).toBe('completed');
    expect(run.result).toEqual({ parts: items.map((item) => `found ${item}`), first: 'found tail1', second: 'second pass after found tail1!' });
    expect(run.counts).toEqual({ total: 14, running: 0, succeeded: 14, failed: 0, cancelled: 0 });
    const events = await runEvents(runtime.baseUrl, run.id);
    expect(events[0].type).toBe('workflow.started');
    expect(events.at(-1)).toMatchObject({ type: 'workflow.completed', result: run.result });
    expect(events.map((event) => Number(event.seq))).toEqual(events.map((_event, index) => index + 1));
    const overlap = peakOverlap(events);
    expect(overlap).toBeGreaterThan(1);
    expect(overlap).toBeLessThanOrEqual(3);
    // Every task turn is an ordinary turn: GET /turns/:id works for it.
    const started1 = events.find((event) => event.type === 'task.started');
    const turn = await (await fetch(`${runtime.baseUrl}/turns/${started1.turnId}`)).json();
    expect(turn).toMatchObject({ kind: 'workflow_task', status: 'completed' });
  }, 60_000);
});
