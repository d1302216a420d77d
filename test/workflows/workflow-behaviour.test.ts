import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { postWorkflow, runEvents, submitting, waitForRun } from './workflow-kit.js';

describe('workflow runs (SQLite)', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime({ env: { WORKFLOW_SCRIPT_CPU_MS: '3000', WORKFLOW_SCRIPT_MEMORY_MB: '4' } });
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('gives a call 3 attempts, then null; a later attempt may succeed', async () => {
    const started = await postWorkflow(runtime.baseUrl, {
      script: "return [await agent('never answers', { label: 'mute' }), await agent('second try works', { label: 'flaky' })];",
      model: { tasks: { mute: [{ text: 'no submission' }, { text: 'still none' }], 'flaky#1': [{ text: 'no' }, { text: 'no' }], flaky: submitting('ok on {{attempt}}') } },
    });
    const run = await waitForRun(runtime.baseUrl, started.body.id);
    expect(run).toMatchObject({ status: 'completed', result: [null, 'ok on 2'], counts: { total: 2, succeeded: 1, failed: 1 } });
    expect(run.failures).toHaveLength(1);
    expect(run.failures[0].error).toContain('no_result_submitted');
    const failed = (await runEvents(runtime.baseUrl, run.id)).filter((event) => event.type === 'task.failed');
    expect(failed.map((event): unknown[] => [event.taskId.endsWith('.1') ? 'mute' : 'flaky', event.attempt, event.willRetry])).toEqual([
      ['mute', 1, true],
      ['mute', 2, true],
      ['mute', 3, false],
      ['flaky', 1, true],
    ]);
  });

  it('resolves a call with a bad schema to null, with the reason, before any model call', async () => {
    const started = await postWorkflow(runtime.baseUrl, {
      script: "return await agent('x', { label: 'bad', schema: { type: ['string', 'null'] } });",
      model: { tasks: { '*': submitting('never used') } },
    });
    const run = await waitForRun(runtime.baseUrl, started.body.id);
    expect(run).toMatchObject({ status: 'completed', result: null, counts: { failed: 1 } });
    const events = await runEvents(runtime.baseUrl, run.id);
    expect(events.some((event) => event.type === 'task.started')).toBe(false);
    expect(events.find((event) => event.type === 'task.failed')).toMatchObject({ attempt: 0, willRetry: false, error: expect.stringContaining('exactly one "type"') });
    const open = await postWorkflow(runtime.baseUrl, { script: "return await agent('x', { schema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] } });", model: { script: [] } });
    const openRun = await waitForRun(runtime.baseUrl, open.body.id);
    expect(openRun.failures[0].error).toContain('additionalProperties');
  });

  it('answers 400 naming the field for every value over a hard cap, and creates no run', async () => {
    const before = (await readJson(await fetch(`${runtime.baseUrl}/workflows?agentId=capped`))).workflows.length;
    const cases: [Record<string, unknown>, string][] = [
      [{ concurrency: 33 }, 'concurrency'],
      [{ maxAgentCalls: 1_025 }, 'maxAgentCalls'],
      [{ script: `return 1; // ${'x'.repeat(300 * 1024)}` }, 'script'],
      [{ args: { blob: 'y'.repeat(65 * 1024) } }, 'args'],
      [{ title: 't'.repeat(201) }, 'title'],
      [{ webhook: { url: 'https://10.1.2.3/hook' } }, 'webhook'],
      [{ model: { script: [], name: 'x' } }, 'model'],
    ];
    for (const [override, field] of cases) {
      const response = await postWorkflow(runtime.baseUrl, { agent: { id: 'capped' }, script: 'return 1;', model: { script: [] }, ...override });
      expect(response.status, field).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
      expect(JSON.stringify(response.body.error.issues[0].path), field).toContain(field);
    }
    expect((await readJson(await fetch(`${runtime.baseUrl}/workflows?agentId=capped`))).workflows.length).toBe(before);
    expect((await fetch(`${runtime.baseUrl}/workflows?status=paused`)).status).toBe(400);
    expect((await fetch(`${runtime.baseUrl}/workflows?limit=0`)).status).toBe(400);
    expect((await readJson(await fetch(`${runtime.baseUrl}/workflows/wf_nope`))).error.code).toBe('workflow_not_found');
  });

  it('fails a run past maxAgentCalls, a result over 1 MiB, and drops a task value over 24 KiB to null', async () => {
    const calls = await postWorkflow(runtime.baseUrl, { maxAgentCalls: 2, script: "return Promise.all([agent('1'), agent('2'), agent('3')]);", model: { tasks: { '*': submitting('v') } } });
    expect((await waitForRun(runtime.baseUrl, calls.body.id)).error).toMatchObject({ code: 'max_agent_calls_exceeded' });
    const big = await postWorkflow(runtime.baseUrl, { script: "return 'x'.repeat(1100000);", model: { script: [] } });
    expect((await waitForRun(runtime.baseUrl, big.body.id)).error).toMatchObject({ code: 'result_too_large' });
    const value = await postWorkflow(runtime.baseUrl, { script: "return await agent('big', { label: 'big' });", model: { tasks: { big: submitting('z'.repeat(30 * 1024)) } } });
    const run = await waitForRun(runtime.baseUrl, value.body.id);
    expect(run).toMatchObject({ status: 'completed', result: null });
    expect(run.failures[0].error).toContain('24576');
  });

  it('fails a script that loops forever, one that allocates without bound, and one that throws, saying which', async () => {
    const loop = await postWorkflow(runtime.baseUrl, { script: 'for (;;) {}', model: { script: [] } });
    const hoard = await postWorkflow(runtime.baseUrl, { script: 'const hoard = []; for (;;) hoard.push({ n: hoard.length, next: hoard.at(-1) });', model: { script: [] } });
    const thrower = await postWorkflow(runtime.baseUrl, { script: "const x = await agent('a'); throw new Error('bad input ' + x);", model: { tasks: { '*': submitting('v') } } });
    expect((await waitForRun(runtime.baseUrl, loop.body.id)).error).toMatchObject({ code: 'script_timeout', message: expect.stringContaining('CPU time') });
    expect((await waitForRun(runtime.baseUrl, hoard.body.id)).error).toMatchObject({ code: 'script_out_of_memory', message: expect.stringContaining('memory') });
    expect((await waitForRun(runtime.baseUrl, thrower.body.id)).error).toEqual({ code: 'script_error', message: 'Error: bad input v' });
  });

  it('fails the run as not deterministic when a replay asks for other calls than the stored ones', async () => {
    const started = await postWorkflow(runtime.baseUrl, { script: "const a = await agent('first'); return await agent('then ' + a);", model: { tasks: { '*': submitting('v', 1_500) } } });
    await waitForRun(runtime.baseUrl, started.body.id, (run) => run.counts.total === 1);
    // The stored script changes under the run (as a deploy that edits it would): its replay asks for another first call.
    const database = new BetterSqlite3(path.join(runtime.dataDir, 'turns.sqlite'));
    database.prepare('update workflow_runs set script = ? where id = ?').run("const a = await agent('something else'); return a;", started.body.id);
    database.close();
    const run = await waitForRun(runtime.baseUrl, started.body.id);
    expect(run.error).toMatchObject({ code: 'script_not_deterministic', message: expect.stringContaining('the script is not deterministic') });
  });

  it('cancels mid-run: running task turns end cancel_requested, none starts after, the run ends cancelled once', async () => {
    const started = await postWorkflow(runtime.baseUrl, {
      concurrency: 2,
      script: "return Promise.all([1,2,3,4,5,6].map((n) => agent('slow ' + n, { label: 's' + n })));",
      model: { tasks: { '*': submitting('late', 30_000) } },
    });
    const id = started.body.id;
    await waitForRun(runtime.baseUrl, id, (run) => run.counts.total === 6);
    for (;;) {
      const events = await runEvents(runtime.baseUrl, id);
      if (events.filter((event) => event.type === 'task.started').length === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const cancel = await fetch(`${runtime.baseUrl}/workflows/${id}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(202);
    const run = await waitForRun(runtime.baseUrl, id);
    expect(run).toMatchObject({ status: 'cancelled', counts: { total: 6, cancelled: 6, succeeded: 0 } });
    const events = await runEvents(runtime.baseUrl, id);
    const taskTurns = events.filter((event) => event.type === 'task.started');
    expect(taskTurns).toHaveLength(2);
    for (const event of taskTurns) {
      const turnEvents = await readJson(await fetch(`${runtime.baseUrl}/turns/${event.turnId}/events`, { headers: { accept: 'application/json' } }));
      expect(turnEvents.events.at(-1)).toMatchObject({ type: 'turn.cancelled', reason: 'cancel_requested' });
    }
    expect(events.filter((event) => event.type === 'workflow.cancelled')).toHaveLength(1);
    expect(events.some((event) => event.type === 'task.completed')).toBe(false);
    const again = await fetch(`${runtime.baseUrl}/workflows/${id}/cancel`, { method: 'POST' });
    expect(again.status).toBe(409);
    expect((await readJson(again)).error.code).toBe('workflow_not_running');
    // Past the terminal event an EventSource is told not to come back.
    const lastSeq = events.at(-1).seq;
    expect((await fetch(`${runtime.baseUrl}/workflows/${id}/events`, { headers: { 'last-event-id': String(lastSeq) } })).status).toBe(204);
  });

  it('streams a run as SSE with Last-Event-ID, to its end', async () => {
    const started = await postWorkflow(runtime.baseUrl, { script: "return Promise.all([agent('a'), agent('b'), agent('c')]);", model: { tasks: { '*': submitting('{{prompt}}', 100) } } });
    const response = await fetch(`${runtime.baseUrl}/workflows/${started.body.id}/events`, { headers: { accept: 'text/event-stream', 'last-event-id': '1' } });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = await response.text();
    expect(text.startsWith('retry:')).toBe(true);
    expect(text).not.toContain('event: workflow.started');
    expect(text).toContain('event: task.started');
    expect(text.trim().split('\n\n').at(-1)).toContain('event: workflow.completed');
    expect((await fetch(`${runtime.baseUrl}/workflows/${started.body.id}/events`, { headers: { 'last-event-id': 'x' } })).status).toBe(400);
  });
});
