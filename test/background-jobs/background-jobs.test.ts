/* eslint-disable @typescript-eslint/no-unsafe-return -- the pollers hand back JSON answers, read loosely like the rest of these assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldAnswer, startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
import { startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { getJson, postJson, waitUntil } from '../support/wait-until.js';

const agent = { id: 'researcher', tools: { todo: true, backgroundJobs: true } };

describe('background jobs over HTTP (SQLite)', () => {
  let runtime: TestRuntime;
  let provider: FakeResponsesProvider;
  beforeAll(async () => {
    provider = await startFakeResponsesProvider();
    runtime = await startTestRuntime({ env: { OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-test', MODEL_MAX_RETRIES: '0' } });
  });
  afterAll(async () => {
    await runtime.close();
    await provider.close();
  });

  const job = async (id: string) => (await getJson(`${runtime.baseUrl}/background-jobs/${id}`)).body;

  it('runs three turns because messages arrive while it runs, and completes with the last output', async () => {
    // The first two answers are held until the test has sent its message: it arrives while the
    // turn runs, however slowly a loaded machine gets there.
    const held = [heldAnswer(), heldAnswer()];
    provider.enqueue({ text: 'first pass done', headersAfter: held[0]!.answered }, { text: 'second pass done', headersAfter: held[1]!.answered }, { text: 'all done: 42' });
    const created = await postJson(`${runtime.baseUrl}/background-jobs`, { agent, title: 'Count things', instructions: 'Count the widgets.', model: { name: 'fake-model' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ agentId: 'researcher', title: 'Count things', status: 'running' });
    const id = created.body.id as string;

    await waitUntil('turn 1', async () => ((await job(id)).turns.length === 1 ? true : undefined));
    expect((await postJson(`${runtime.baseUrl}/background-jobs/${id}/messages`, { text: 'also count the gadgets' })).status).toBe(202);
    held[0]!.answer();
    await waitUntil('turn 2', async () => ((await job(id)).turns.length === 2 ? true : undefined));
    expect((await postJson(`${runtime.baseUrl}/background-jobs/${id}/messages`, { text: 'and the gizmos' })).status).toBe(202);
    held[1]!.answer();

    const done = await waitUntil('the end', async () => {
      const record = await job(id);
      return record.status === 'running' ? undefined : record;
    });
    expect(done).toMatchObject({ status: 'completed', output: 'all done: 42', pendingMessages: 0, error: null });
    expect(done.turnIds).toHaveLength(3);
    expect(done.turns.map((turn: { outcome: string }) => turn.outcome)).toEqual(['completed', 'completed', 'completed']);

    // Each turn is a turn like any other, naming its job; the job tools are not in it (no nesting).
    const turn = (await getJson(`${runtime.baseUrl}/turns/${done.turnIds[2]}`)).body;
    expect(turn).toMatchObject({ backgroundJobId: id, status: 'completed', output: 'all done: 42' });
    const tools = (await getJson(`${runtime.baseUrl}/turns/${done.turnIds[0]}/tools`)).body;
    expect(tools.tools.map((tool: { name: string }) => tool.name)).toEqual(['todo']);

    // The model was told the instructions, then each message with what it answered before.
    const inputs = provider.requests.slice(-3).map((request) => JSON.stringify(request.body.input));
    expect(inputs[0]).toContain('Count the widgets.');
    expect(inputs[0]).not.toContain('gadgets');
    expect(inputs[1]).toContain('also count the gadgets');
    expect(inputs[1]).toContain('first pass done');
    expect(inputs[2]).toContain('and the gizmos');
    expect(inputs[2]).toContain('second pass done');

    const events = (await (await fetch(`${runtime.baseUrl}/background-jobs/${id}/events`, { headers: { accept: 'application/json' } })).json()) as { events: { type: string; seq: number }[] };
    expect(events.events.map((event) => event.type)).toEqual([
      'job.started',
      'job.turn_started',
      'job.message_queued',
      'job.turn_finished',
      'job.turn_started',
      'job.message_queued',
      'job.turn_finished',
      'job.turn_started',
      'job.turn_finished',
      'job.completed',
    ]);
    expect(events.events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

    // After the end: 409, and the SSE stream resumed past the end is told not to come back.
    const late = await postJson(`${runtime.baseUrl}/background-jobs/${id}/messages`, { text: 'too late' });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('job_not_running');
    expect((await postJson(`${runtime.baseUrl}/background-jobs/${id}/stop`)).body.error.code).toBe('job_not_running');
    expect((await fetch(`${runtime.baseUrl}/background-jobs/${id}/events`, { headers: { 'last-event-id': '10' } })).status).toBe(204);
    const list = (await getJson(`${runtime.baseUrl}/background-jobs?agentId=researcher`)).body;
    expect(list.backgroundJobs.map((entry: { id: string }) => entry.id)).toContain(id);
  }, 60_000);

  it('stops mid-turn: the running turn is cancelled and the job ends stopped', async () => {
    const created = await postJson(`${runtime.baseUrl}/background-jobs`, {
      agent: { id: 'stopper' },
      title: 'Slow',
      instructions: 'Think for a long time.',
      model: { script: [{ text: 'never said', delayMs: 30_000 }] },
    });
    const id = created.body.id as string;
    const stream = fetch(`${runtime.baseUrl}/background-jobs/${id}/events`, { headers: { accept: 'application/x-ndjson' } });
    const running = await waitUntil('turn 1', async () => {
      const record = await job(id);
      return record.turns.length === 1 ? record : undefined;
    });
    const stopped = await postJson(`${runtime.baseUrl}/background-jobs/${id}/stop`);
    expect(stopped.status).toBe(202);
    expect(stopped.body.status).toBe('stopped');
    const turn = await waitUntil('the turn to end', async () => {
      const record = (await getJson(`${runtime.baseUrl}/turns/${running.turnIds[0]}`)).body;
      return record.status === 'running' ? undefined : record;
    });
    expect(turn.status).toBe('cancelled');
    const lines = (await (await stream).text()).trim().split('\n').map((line) => JSON.parse(line) as { type: string });
    expect(lines.at(-1)?.type).toBe('job.stopped');
    const final = await waitUntil('the turn outcome', async () => {
      const record = await job(id);
      return record.turns[0].outcome === 'running' ? undefined : record;
    });
    expect(final).toMatchObject({ status: 'stopped', turns: [{ outcome: 'stopped' }] });
  }, 30_000);

  it('answers 400 for a bad body, 404 for an unknown job, and refuses a webhook the server cannot sign', async () => {
    const bad = await postJson(`${runtime.baseUrl}/background-jobs`, { agent: { id: 'x' }, title: '', instructions: 'y', model: {} });
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues[0].path).toEqual(['title']);
    expect((await getJson(`${runtime.baseUrl}/background-jobs/job_nope`)).body.error.code).toBe('job_not_found');
    expect((await postJson(`${runtime.baseUrl}/background-jobs/job_nope/messages`, { text: 'hi' })).status).toBe(404);
    const hook = await postJson(`${runtime.baseUrl}/background-jobs`, { agent: { id: 'x' }, title: 't', instructions: 'y', model: {}, webhook: { url: 'https://example.com/hook' } });
    expect(hook.status).toBe(400);
    expect(hook.body.error.issues[0].path).toEqual(['webhook', 'url']);
    expect((await getJson(`${runtime.baseUrl}/background-jobs?agentId=`)).status).toBe(400);
  });
});

describe('a background job whose agent is busy', () => {
  it('waits for the agent instead of failing (AGENT_QUEUE_LIMIT=0: a second turn of a busy agent is refused)', async () => {
    const provider = await startFakeResponsesProvider();
    const runtime = await startTestRuntime({ env: { OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-test', MODEL_MAX_RETRIES: '0', AGENT_QUEUE_LIMIT: '0' } });
    try {
      const held = heldAnswer();
      provider.enqueue({ text: 'the direct turn', headersAfter: held.answered }, { text: 'the job answer' });
      const direct = fetch(`${runtime.baseUrl}/turns`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ agent: { id: 'busy' }, input: 'hold on', model: { name: 'fake-model' } }),
      });
      await provider.waitForRequest(1);
      // The condition the job meets: another turn of the agent is refused, not queued.
      const refused = await fetch(`${runtime.baseUrl}/turns`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ agent: { id: 'busy' }, input: 'me too', model: { name: 'fake-model' } }),
      });
      expect(refused.status).toBe(409);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('agent_busy');
      const created = await postJson(`${runtime.baseUrl}/background-jobs`, { agent: { id: 'busy' }, title: 'Later', instructions: 'Answer when free.', model: { name: 'fake-model' } });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      // Longer than a retry: the job is still running, and its turn has not started.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const waiting = (await getJson(`${runtime.baseUrl}/background-jobs/${id}`)).body;
      expect(waiting.status).toBe('running');
      expect(provider.requests).toHaveLength(1);
      held.answer();
      expect((await direct).status).toBe(200);
      const done = await waitUntil('the job to end', async () => {
        const record = (await getJson(`${runtime.baseUrl}/background-jobs/${id}`)).body;
        return record.status === 'running' ? undefined : record;
      });
      expect(done).toMatchObject({ status: 'completed', output: 'the job answer' });
    } finally {
      await runtime.close();
      await provider.close();
    }
  }, 30_000);
});
