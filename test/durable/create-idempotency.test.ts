import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres-schema.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

/**
 * `Idempotency-Key` on POST /workflows, /background-jobs and /schedules, as on POST /turns:
 * on SQLite (one process) and on PostgreSQL (two replicas, concurrent retries split between them).
 */
const kinds = [
  {
    name: 'workflow',
    path: '/workflows',
    list: (agentId: string) => `/workflows?agentId=${agentId}`,
    listed: 'workflows',
    body: (agentId: string, title = 'Keyed') => ({ agent: { id: agentId }, title, script: 'return 1;', model: { tasks: {} } }),
  },
  {
    name: 'background job',
    path: '/background-jobs',
    list: (agentId: string) => `/background-jobs?agentId=${agentId}`,
    listed: 'backgroundJobs',
    body: (agentId: string, title = 'Keyed') => ({ agent: { id: agentId }, title, instructions: 'Answer.', model: { script: [{ text: 'ok' }] } }),
  },
  {
    name: 'schedule',
    path: '/schedules',
    list: (agentId: string) => `/schedules?agentId=${agentId}`,
    listed: 'schedules',
    body: (agentId: string, prompt = 'Keyed') => ({ agent: { id: agentId }, kind: 'once', delaySeconds: 3_600, prompt, model: { script: [{ text: 'ok' }] } }),
  },
] as const;

describe.each([
  ['SQLite', 1],
  ['PostgreSQL', 2],
] as const)('idempotent creates of durable work on %s', (store, replicaCount) => {
  const replicas: TestRuntime[] = [];
  let schema: PostgresSchema | undefined;
  beforeAll(async () => {
    if (store === 'SQLite') {
      replicas.push(await startTestRuntime());
      return;
    }
    const made = await createPostgresSchema();
    schema = made;
    for (let index = 0; index < replicaCount; index += 1) {
      replicas.push(await made.whileSchemasAreStable(() => startTestRuntime({ env: { DATABASE_URL: made.url, INSTANCE_ID: `keys-${index}` } })));
    }
  });
  afterAll(async () => {
    for (const replica of replicas) await replica.close();
    await schema?.drop();
  });

  const post = (path: string, payload: unknown, key?: string, replica = 0) =>
    fetch(`${replicas[replica % replicas.length]?.baseUrl ?? ''}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
      body: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
  const listed = async (kind: (typeof kinds)[number], agentId: string): Promise<{ id: string }[]> => {
    const answer = (await (await fetch(`${replicas[0]?.baseUrl ?? ''}${kind.list(agentId)}`)).json()) as Record<string, { id: string }[]>;
    return answer[kind.listed] ?? [];
  };

  it.each(kinds)('a retried $name create answers what the key made, marked idempotent-replayed', async (kind) => {
    const agentId = `retry-${kind.listed}`;
    const first = await post(kind.path, kind.body(agentId), 'create-1');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const made = await readJson(first);

    // Key order and spacing do not matter: bodies are compared as canonical JSON.
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(kind.body(agentId)).reverse()), null, 2);
    const again = await post(kind.path, reordered, 'create-1', 1);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await readJson(again)).id).toBe(made.id);

    // Without a key, or with another key, the same body makes another.
    expect((await readJson(await post(kind.path, kind.body(agentId)))).id).not.toBe(made.id);
    expect((await readJson(await post(kind.path, kind.body(agentId), 'create-2'))).id).not.toBe(made.id);
    expect(await listed(kind, agentId)).toHaveLength(3);
  });

  it.each(kinds)('the key with another $name body is 422 idempotency_key_reused and makes nothing', async (kind) => {
    const agentId = `reused-${kind.listed}`;
    const made = await readJson(await post(kind.path, kind.body(agentId), 'reused'));
    const changed = await post(kind.path, kind.body(agentId, 'Another'), 'reused', 1);
    expect(changed.status).toBe(422);
    expect((await readJson(changed)).error).toMatchObject({ code: 'idempotency_key_reused', message: expect.stringContaining(made.id) });
    expect((await listed(kind, agentId)).map((record) => record.id)).toEqual([made.id]);
  });

  it.each(kinds)('12 concurrent identical $name creates make exactly one', async (kind) => {
    const agentId = `raced-${kind.listed}`;
    const answers = await Promise.all(Array.from({ length: 12 }, (_, index) => post(kind.path, kind.body(agentId), 'raced', index)));
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 12 }, () => 201));
    const ids = await Promise.all(answers.map(async (answer) => (await readJson(answer)).id as string));
    expect(new Set(ids).size).toBe(1);
    expect(answers.filter((answer) => answer.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect(await listed(kind, agentId)).toHaveLength(1);
  });

  it('keeps each kind\'s keys apart, and refuses a key that is not 1–200 visible ASCII characters with 400', async () => {
    const agentId = 'kinds-apart';
    const ids = [];
    for (const kind of kinds) {
      const answer = await post(kind.path, kind.body(agentId), 'shared-key');
      expect(answer.status).toBe(201);
      expect(answer.headers.get('idempotent-replayed')).toBeNull();
      ids.push((await readJson(answer)).id);
    }
    expect(new Set(ids).size).toBe(3);
    for (const kind of kinds) {
      const refused = await post(kind.path, kind.body('bad-key'), 'has space');
      expect(refused.status).toBe(400);
      expect((await readJson(refused)).error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('idempotency-key') });
      expect(await listed(kind, 'bad-key')).toHaveLength(0);
    }
  });
});
