import BetterSqlite3 from 'better-sqlite3';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream } from '../support/sse-client.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

const valid = { agent: { id: 'acme' }, input: 'hi', model: { script: [{ text: 'hello' }] } };

function turnCount(runtime: TestRuntime): number {
  const database = new BetterSqlite3(path.join(runtime.dataDir, 'turns.sqlite'), { readonly: true });
  try {
    return (database.prepare('select count(*) as count from turns').get() as { count: number }).count;
  } finally {
    database.close();
  }
}

/** Posts a raw body through supertest (against the listening server), as a client would send it. */
/** Waits until the server reports `count` turns in flight (so a test does not race the start of one). */
async function untilRunning(runtime: TestRuntime, count: number): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    if ((await readJson(await fetch(`${runtime.baseUrl}/readyz`))).runningTurns === count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never saw ${count} running turns`);
}

async function post(runtime: TestRuntime, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const response = await request(runtime.app.server).post('/turns').set({ accept: 'application/json', ...headers }).send(body);
  return { status: response.status, body: JSON.parse(response.text) };
}

describe('bad requests to POST /turns', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime({ env: { BODY_LIMIT_BYTES: '4096' } });
  });
  afterAll(async () => {
    await runtime.close();
  });

  const cases: [string, string, Record<string, string> | undefined, number, string, ((body: any) => void)?][] = [
    ['malformed JSON', '{"agent": {"id": "acme"', undefined, 400, 'invalid_request'],
    ['an empty body', '', undefined, 400, 'invalid_request'],
    ['a JSON array', '[]', undefined, 400, 'invalid_request'],
    ['input of the wrong type', JSON.stringify({ ...valid, input: 42 }), undefined, 400, 'invalid_request', (body) => {
      expect(body.error.issues[0].path).toEqual(['input']);
      expect(body.error.message).toMatch(/^input: /);
    }],
    ['a missing agent', JSON.stringify({ input: 'hi' }), undefined, 400, 'invalid_request', (body) => {
      expect(body.error.issues.map((issue: { path: string[] }) => issue.path)).toContainEqual(['agent']);
    }],
    ['an agent id that could leave its folder', JSON.stringify({ ...valid, agent: { id: '../etc' } }), undefined, 400, 'invalid_request', (body) => {
      expect(body.error.issues[0].path).toEqual(['agent', 'id']);
    }],
    ['a misspelt tool source', JSON.stringify({ ...valid, agent: { id: 'acme', tools: { computr: true } } }), undefined, 400, 'invalid_request', (body) => {
      expect(body.error.issues[0].path).toEqual(['agent', 'tools']);
      expect(body.error.message).toContain('computr');
    }],
    ['an unknown top-level field', JSON.stringify({ ...valid, stream: true }), undefined, 400, 'invalid_request'],
    ['a workflow task without a task', JSON.stringify({ ...valid, kind: 'workflow_task' }), undefined, 400, 'invalid_request', (body) => {
      expect(body.error.issues[0].path).toEqual(['task']);
    }],
    ['a task on a text turn', JSON.stringify({ ...valid, task: { instructions: 'x', resultSchema: { type: 'object' } } }), undefined, 400, 'invalid_request'],
    ['a negative iteration limit', JSON.stringify({ ...valid, limits: { maxIterations: -1 } }), undefined, 400, 'invalid_request'],
    ['a named model with no provider configured', JSON.stringify({ ...valid, model: { name: 'gpt-5.1' } }), undefined, 400, 'model_not_configured'],
    ['a body over the limit', JSON.stringify({ ...valid, input: 'x'.repeat(10_000) }), undefined, 413, 'payload_too_large'],
    ['a body that is not JSON', 'input=hi', { 'content-type': 'application/x-www-form-urlencoded' }, 415, 'unsupported_media_type'],
    ['plain text', 'hi', { 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
    ['a prototype-poisoning body', '{"agent":{"id":"acme"},"input":"hi","__proto__":{"admin":true}}', undefined, 400, 'invalid_request'],
  ];

  it.each(cases)('answers %s with the error envelope and creates no turn', async (_name, body, headers, status, code, check) => {
    const before = turnCount(runtime);
    const answer = await post(runtime, body, headers);
    expect(answer.status).toBe(status);
    expect(answer.body.error.code).toBe(code);
    expect(typeof answer.body.error.message).toBe('string');
    check?.(answer.body);
    expect(turnCount(runtime)).toBe(before);
  });

  it('says "required" for a missing required field, whatever its type, and keeps the other messages', async () => {
    const missing: [string, unknown, string, (string | number)[]][] = [
      // A union (string | messages): Zod alone says only "Invalid input".
      ['/turns', { agent: { id: 'acme' } }, 'input: required', ['input']],
      ['/turns', { input: 'hi' }, 'agent: required', ['agent']],
      ['/turns', { agent: {}, input: 'hi' }, 'agent.id: required', ['agent', 'id']],
      ['/workflows', { agent: { id: 'acme' }, title: 'Missing its script' }, 'script: required', ['script']],
    ];
    for (const [route, body, message, path] of missing) {
      const response = await request(runtime.app.server).post(route).set({ accept: 'application/json' }).send(body as object);
      expect(response.status, route).toBe(400);
      expect(response.body.error, JSON.stringify(body)).toEqual({ code: 'invalid_request', message, issues: [{ path, message: 'required' }] });
    }
    const present: [unknown, string][] = [
      [{ ...valid, input: 42 }, 'input: Invalid input'],
      [{ ...valid, input: [{ role: 'user' }] }, 'input: Invalid input'],
      [{ ...valid, agent: { id: 42 } }, 'agent.id: expected string, received number'],
      [{ ...valid, agent: null }, 'agent: expected object, received null'],
      // A refinement's own message about a missing field is its author's, and stays.
      [{ ...valid, kind: 'workflow_task' }, 'task: required when kind is "workflow_task"'],
    ];
    for (const [body, message] of present) {
      const answer = await post(runtime, JSON.stringify(body));
      expect(answer.status).toBe(400);
      expect(answer.body.error.message).toBe(message);
    }
  });

  it('answers unknown routes with 404 in the envelope', async () => {
    const response = await fetch(`${runtime.baseUrl}/nope`);
    expect(response.status).toBe(404);
    expect((await readJson(response)).error.code).toBe('not_found');
  });
});

describe('operations and protection', () => {
  it('serves health, readiness, the OpenAPI document and the docs', async () => {
    const runtime = await startTestRuntime();
    try {
      expect(await readJson(await fetch(`${runtime.baseUrl}/healthz`))).toEqual({ status: 'ok' });
      expect(await readJson(await fetch(`${runtime.baseUrl}/readyz`))).toEqual({ status: 'ready', runningTurns: 0 });
      const document = await readJson(await fetch(`${runtime.baseUrl}/openapi.json`));
      expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/turns', '/turns/{id}', '/turns/{id}/tools', '/turns/{id}/events', '/turns/{id}/cancel']));
      const docs = await fetch(`${runtime.baseUrl}/docs`, { redirect: 'follow' });
      expect(docs.status).toBe(200);
      expect(await docs.text()).toContain('swagger');
    } finally {
      await runtime.close();
    }
  });

  it('requires the bearer token when one is configured: 401 without, 403 wrong, probes stay open', async () => {
    const runtime = await startTestRuntime({ env: { API_TOKEN: 'correct-horse-battery-staple' } });
    try {
      const missing = await post(runtime, JSON.stringify(valid));
      expect(missing).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
      const wrong = await post(runtime, JSON.stringify(valid), { 'content-type': 'application/json', authorization: 'Bearer nope' });
      expect(wrong).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
      const right = await post(runtime, JSON.stringify(valid), { 'content-type': 'application/json', authorization: 'Bearer correct-horse-battery-staple' });
      expect(right.status).toBe(200);
      expect((await fetch(`${runtime.baseUrl}/healthz`)).status).toBe(200);
      expect((await fetch(`${runtime.baseUrl}/turns/${right.body.id as string}`)).status).toBe(401);
    } finally {
      await runtime.close();
    }
  });

  it('answers 429 rate_limited over the configured rate', async () => {
    const runtime = await startTestRuntime({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
    try {
      const statuses = [];
      for (let index = 0; index < 3; index += 1) statuses.push((await post(runtime, JSON.stringify(valid))).status);
      expect(statuses.slice(0, 2)).toEqual([200, 200]);
      const limited = await post(runtime, JSON.stringify(valid));
      expect(limited).toMatchObject({ status: 429, body: { error: { code: 'rate_limited' } } });
    } finally {
      await runtime.close();
    }
  });

  it('answers 503 overloaded when too many turns are in flight', async () => {
    const runtime = await startTestRuntime({ env: { MAX_CONCURRENT_TURNS: '1' } });
    try {
      // In flight until cancelled below, however long the refusal takes on a loaded machine.
      const slow = await openStream({ url: `${runtime.baseUrl}/turns`, body: { ...valid, model: { script: [{ text: 'slow', delayMs: 30_000 }] } } });
      await untilRunning(runtime, 1);
      const refused = await post(runtime, JSON.stringify(valid));
      expect(refused).toMatchObject({ status: 503, body: { error: { code: 'overloaded' } } });
      // The one in flight goes on, untouched by the refusal.
      const turnId = String(slow.response.headers['turn-id']);
      expect((await readJson(await fetch(`${runtime.baseUrl}/turns/${turnId}`))).status).toBe('running');
      expect((await fetch(`${runtime.baseUrl}/turns/${turnId}/cancel`, { method: 'POST' })).status).toBe(202);
      await slow.ended;
    } finally {
      await runtime.close();
    }
  });

  it('drains on close: readiness turns 503, new turns are refused, running ones end as shutdown', async () => {
    const runtime = await startTestRuntime({ env: { SHUTDOWN_GRACE_MS: '200' } });
    const slow = fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ ...valid, model: { script: [{ text: 'slow', delayMs: 30_000 }] } }),
    });
    await untilRunning(runtime, 1);
    runtime.service.beginDrain();
    expect((await fetch(`${runtime.baseUrl}/readyz`)).status).toBe(503);
    expect((await post(runtime, JSON.stringify(valid))).body.error.code).toBe('shutting_down');
    const closing = runtime.close();
    const body = await readJson(await slow);
    expect(body).toMatchObject({ status: 'cancelled', error: { reason: 'shutdown' } });
    await closing;
  });
});
