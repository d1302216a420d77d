import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream, eventsOf } from '../support/sse-client.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres-schema.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

/** Two replicas of the service sharing one PostgreSQL schema, as at scale. */
describe('replicas sharing PostgreSQL', () => {
  let schema: PostgresSchema;
  let first: TestRuntime;
  let second: TestRuntime;

  beforeAll(async () => {
    schema = await createPostgresSchema();
    first = await schema.whileSchemasAreStable(() => startTestRuntime({ env: { DATABASE_URL: schema.url, INSTANCE_ID: 'replica-a' } }));
    second = await schema.whileSchemasAreStable(() => startTestRuntime({ env: { DATABASE_URL: schema.url, INSTANCE_ID: 'replica-b' } }));
  });
  afterAll(async () => {
    await first.close();
    await second.close();
    await schema.drop();
  });

  it('runs a turn on one replica and serves its record, tools and live events from the other', async () => {
    const stream = await openStream({
      url: `${first.baseUrl}/turns`,
      body: {
        agent: { id: 'pg-agent', tools: { computer: true } },
        input: 'write and finish',
        model: { script: [{ calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'A' } }], delayMs: 300 }, { text: 'done' }] },
      },
    });
    const turnId = String(stream.response.headers['turn-id']);
    await stream.waitFor((message) => message.event === 'turn.started');

    // The other replica does not run the turn: it tails it from the store.
    const tail = await openStream({ url: `${second.baseUrl}/turns/${turnId}/events`, method: 'GET' });
    await Promise.all([stream.ended, tail.ended]);
    expect(eventsOf(tail)).toEqual(eventsOf(stream));
    expect(eventsOf(tail).at(-1)).toMatchObject({ type: 'turn.completed', output: 'done' });

    const record = await readJson(await fetch(`${second.baseUrl}/turns/${turnId}`));
    expect(record).toMatchObject({ id: turnId, status: 'completed', iterations: 2 });
    const tools = await readJson(await fetch(`${second.baseUrl}/turns/${turnId}/tools`));
    expect(tools.tools.map((tool: { name: string }) => tool.name)).toContain('write_file');

    // Cancel works through any replica, but not once the turn has ended.
    const cancel = await fetch(`${second.baseUrl}/turns/${turnId}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(409);
    expect((await readJson(cancel)).error.message).toContain('already ended');
  });

  it('keeps each agent todo list in the shared store', async () => {
    const write = await fetch(`${first.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        agent: { id: 'pg-todo', tools: { todo: true } },
        input: 'plan',
        model: { script: [{ calls: [{ name: 'todo', arguments: { items: [{ content: 'ship it', status: 'in_progress' }] } }] }] },
      }),
    });
    expect((await readJson(write)).status).toBe('completed');
    const read = await readJson(
      await fetch(`${second.baseUrl}/turns`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          agent: { id: 'pg-todo', tools: { todo: true } },
          input: 'again',
          model: { script: [{ calls: [{ name: 'todo', arguments: { items: [{ content: 'ship it', status: 'completed' }] } }] }] },
        }),
      }),
    );
    const completed = read.events.find((event: { type: string }) => event.type === 'tool.completed');
    expect(completed.output).toContain('1 of 1 done');
  });
});
