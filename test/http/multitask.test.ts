import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, openStream, type OpenStream } from '../support/sse-client.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { waitUntil } from '../support/wait-until.js';

/** `multitask` on one process with its SQLite store: how turns of one agent share its home. */
describe('several turns of one agent', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime({ env: { AGENT_QUEUE_LIMIT: '2', SSE_PING_MS: '50' } });
  });
  afterAll(async () => {
    await runtime.close();
  });

  const longTurn = (agentId: string, extra: Record<string, unknown> = {}) => ({ agent: { id: agentId }, input: 'wait', model: { script: [{ text: 'slow', delayMs: 60_000 }] }, ...extra });
  const shortTurn = (agentId: string, extra: Record<string, unknown> = {}) => ({ agent: { id: agentId }, input: 'quick', model: { script: [{ text: 'done', delayMs: 100 }] }, ...extra });
  const start = async (body: unknown): Promise<{ stream: OpenStream; turnId: string }> => {
    const stream = await openStream({ url: `${runtime.baseUrl}/turns`, body });
    return { stream, turnId: String(stream.response.headers['turn-id']) };
  };
  const post = (body: unknown, accept = 'text/event-stream') =>
    fetch(`${runtime.baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: JSON.stringify(body) });
  const types = (stream: OpenStream) => stream.messages.map((message) => message.event);
  const record = async (turnId: string): Promise<any> => readJson(await fetch(`${runtime.baseUrl}/turns/${turnId}`));
  const cancel = (turnId: string) => fetch(`${runtime.baseUrl}/turns/${turnId}/cancel`, { method: 'POST' });

  it('queues turns of a busy agent by default, numbers their places, keeps their streams open with pings and runs them in order', async () => {
    // The first turn runs until the test cancels it, so the others are queued however slowly they arrive.
    const first = await start(longTurn('fifo'));
    await first.stream.waitFor((message) => message.event === 'turn.started');
    const second = await start(shortTurn('fifo'));
    const third = await start(shortTurn('fifo'));
    expect(second.stream.response.statusCode).toBe(200);
    expect(JSON.parse((await second.stream.waitFor((message) => message.event === 'turn.queued')).data)).toMatchObject({ type: 'turn.queued', seq: 1, position: 1 });
    expect(JSON.parse((await third.stream.waitFor((message) => message.event === 'turn.queued')).data)).toMatchObject({ position: 2 });
    expect(await record(third.turnId)).toMatchObject({ status: 'queued', queuedAt: expect.any(String), finishedAt: null });
    await waitUntil('a ping to the queued stream', () => (second.stream.comments.includes(': ping') ? true : undefined));
    expect(second.stream.messages.map((message) => message.event)).toEqual(['turn.queued']);
    await cancel(first.turnId);

    await Promise.all([first.stream.ended, second.stream.ended, third.stream.ended]);
    const started = (entry: { stream: OpenStream }) => String(eventsOf(entry.stream).find((event) => event['type'] === 'turn.started')?.['at']);
    const ended = (entry: { stream: OpenStream }) => String(eventsOf(entry.stream).at(-1)?.['at']);
    expect(started(second) >= ended(first)).toBe(true);
    expect(started(third) >= ended(second)).toBe(true);
    expect(types(third.stream)).toEqual(['turn.queued', 'turn.started', 'message.delta', 'message.completed', 'turn.completed']);
    expect((await record(first.turnId)).queuedAt).toBeUndefined();
  });

  it('never lets two queued turns of an agent interleave in its home', async () => {
    // A turn of the agent runs until the six have been answered or queued: which of them wait is
    // then decided by the queue alone, not by how fast a loaded machine runs the first of them.
    const blocker = await start(longTurn('one-home'));
    await blocker.stream.waitFor((message) => message.event === 'turn.started');
    let refused = 0;
    const answers = Promise.all(
      Array.from({ length: 6 }, (_unused, index) =>
        post(
          {
            agent: { id: 'one-home', tools: { computer: true } },
            input: 'write then read',
            model: {
              script: [
                { calls: [{ name: 'write_file', arguments: { path: 'mine.txt', content: `turn ${index}` } }] },
                { calls: [{ name: 'read_file', arguments: { path: 'mine.txt' } }], delayMs: 50 },
                { text: 'ok' },
              ],
            },
          },
          'application/json',
        )
          .then((response) => {
            if (response.status === 409) refused += 1;
            return response;
          })
          .then(readJson),
      ),
    );
    // AGENT_QUEUE_LIMIT is 2: of six while the agent is busy, two wait, four are refused.
    await waitUntil('four refusals', () => (refused === 4 ? true : undefined));
    await cancel(blocker.turnId);
    const turns = await answers;
    const ran = turns.filter((turn) => turn.status === 'completed');
    expect(ran.length).toBe(2);
    expect(turns.filter((turn) => turn.error?.code === 'agent_busy')).toHaveLength(4);
    for (const [index, turn] of turns.entries()) {
      if (turn.status !== 'completed') continue;
      const read = turn.events.find((event: { name?: string; type: string }) => event.type === 'tool.completed' && event.name === 'read_file');
      // Each turn reads back exactly what it wrote: no other turn wrote in between.
      expect(read.output).toContain(`turn ${index}`);
    }
    await blocker.stream.ended;
  });

  it('cancels a queued turn before it starts: no turn.started, and the next one runs', async () => {
    // Runs until cancelled below, so the two after it are queued however slowly they arrive.
    const running = await start(longTurn('cancel-queued'));
    await running.stream.waitFor((message) => message.event === 'turn.started');
    const doomed = await start(shortTurn('cancel-queued'));
    const next = await start(shortTurn('cancel-queued'));
    await doomed.stream.waitFor((message) => message.event === 'turn.queued');
    const answer = await cancel(doomed.turnId);
    expect(answer.status).toBe(202);
    expect(await readJson(answer)).toMatchObject({ status: 'cancelled', queuedAt: expect.any(String), error: { reason: 'cancel_requested' } });
    await doomed.stream.ended;
    expect(eventsOf(doomed.stream).map((event) => event['type'])).toEqual(['turn.queued', 'turn.cancelled']);
    expect((await cancel(doomed.turnId)).status).toBe(409);
    expect(await record(next.turnId)).toMatchObject({ status: 'queued' });
    await cancel(running.turnId);
    await next.stream.ended;
    expect(eventsOf(next.stream).at(-1)).toMatchObject({ type: 'turn.completed', output: 'done' });
    await running.stream.ended;
  });

  it('ends a queued turn whose client leaves as client_disconnected, without starting it', async () => {
    const running = await start(longTurn('leave-queued'));
    await running.stream.waitFor((message) => message.event === 'turn.started');
    const leaving = await start(shortTurn('leave-queued'));
    await leaving.stream.waitFor((message) => message.event === 'turn.queued');
    leaving.stream.destroy();
    let stored = await record(leaving.turnId);
    while (stored.status === 'queued') stored = await record(leaving.turnId);
    expect(stored).toMatchObject({ status: 'cancelled', error: { reason: 'client_disconnected' } });
    const events = await readJson(await fetch(`${runtime.baseUrl}/turns/${leaving.turnId}/events`, { headers: { accept: 'application/json' } }));
    expect(events.events.map((event: { type: string }) => event.type)).toEqual(['turn.queued', 'turn.cancelled']);
    await cancel(running.turnId);
  });

  it('answers 409 agent_busy beyond AGENT_QUEUE_LIMIT and for multitask reject, creating no turn', async () => {
    const running = await start(longTurn('limits'));
    await running.stream.waitFor((message) => message.event === 'turn.started');
    const rejected = await post(shortTurn('limits', { multitask: 'reject' }));
    expect(rejected.status).toBe(409);
    expect(rejected.headers.get('turn-id')).toBeNull();
    expect((await readJson(rejected)).error).toMatchObject({ code: 'agent_busy', message: expect.stringContaining('reject') });
    const queued = [await start(longTurn('limits')), await start(longTurn('limits'))];
    const over = await post(shortTurn('limits'));
    expect(over.status).toBe(409);
    expect((await readJson(over)).error.message).toContain('AGENT_QUEUE_LIMIT');
    // Another agent is not affected.
    expect((await readJson(await post(shortTurn('limits-other'), 'application/json'))).status).toBe('completed');
    for (const entry of [...queued, running]) await cancel(entry.turnId);
    await Promise.all([running, ...queued].map((entry) => entry.stream.ended));
  });

  it('interrupts the running turn with reason superseded, then runs the new one', async () => {
    const running = await start(longTurn('interrupt'));
    await running.stream.waitFor((message) => message.event === 'turn.started');
    const newer = await start(shortTurn('interrupt', { multitask: 'interrupt' }));
    await Promise.all([running.stream.ended, newer.stream.ended]);
    expect(eventsOf(running.stream).at(-1)).toMatchObject({ type: 'turn.cancelled', reason: 'superseded' });
    expect(await record(running.turnId)).toMatchObject({ status: 'cancelled', error: { code: 'cancelled', reason: 'superseded' } });
    expect(types(newer.stream)).toEqual(['turn.queued', 'turn.started', 'message.delta', 'message.completed', 'turn.completed']);
  });

  it('runs an interrupt on a free agent at once, without queueing', async () => {
    const alone = await start(shortTurn('interrupt-free', { multitask: 'interrupt' }));
    await alone.stream.ended;
    expect(types(alone.stream)[0]).toBe('turn.started');
    expect((await record(alone.turnId)).queuedAt).toBeUndefined();
  });

  it('runs concurrent turns and workflow task turns beside a running turn, never waiting for the agent', async () => {
    const running = await start(longTurn('beside'));
    await running.stream.waitFor((message) => message.event === 'turn.started');
    const concurrent = await readJson(await post(shortTurn('beside', { multitask: 'concurrent' }), 'application/json'));
    expect(concurrent).toMatchObject({ status: 'completed' });
    expect(concurrent.events[0].type).toBe('turn.started');
    const task = await readJson(
      await post(
        {
          agent: { id: 'beside' },
          kind: 'workflow_task',
          input: 'answer',
          task: { instructions: 'say yes', resultSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false } },
          model: { script: [{ calls: [{ name: 'submit_result', arguments: { result: { ok: true } } }] }] },
        },
        'application/json',
      ),
    );
    expect(task).toMatchObject({ status: 'completed', result: { ok: true } });
    expect(task.queuedAt).toBeUndefined();
    expect((await record(running.turnId)).status).toBe('running');
    await cancel(running.turnId);
    await running.stream.ended;
  });

  it('refuses a multitask that is not one of the four, and a waiting workflow task, with 400', async () => {
    const unknown = await post(shortTurn('bad-multitask', { multitask: 'queue' }));
    expect(unknown.status).toBe(400);
    expect((await readJson(unknown)).error.issues[0].path).toEqual(['multitask']);
    const task = await post({
      agent: { id: 'bad-multitask' },
      kind: 'workflow_task',
      multitask: 'enqueue',
      input: 'x',
      task: { instructions: 'x', resultSchema: { type: 'object', properties: {}, required: [], additionalProperties: false } },
    });
    expect(task.status).toBe(400);
    expect((await readJson(task)).error.message).toContain('multitask');
  });
});
