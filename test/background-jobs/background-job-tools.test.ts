/* eslint-disable @typescript-eslint/no-unsafe-return -- the pollers hand back JSON answers, read loosely like the rest of these assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { getJson, waitUntil } from '../support/wait-until.js';

async function runTurn(runtime: TestRuntime, body: unknown): Promise<any> {
  const response = await fetch(`${runtime.baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
  return readJson(response);
}

describe('background job tools in a turn', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime();
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('starts a job from a main turn; the job inherits the model and cannot start jobs itself', async () => {
    const turn = await runTurn(runtime, {
      agent: { id: 'boss', tools: { backgroundJobs: true } },
      input: 'start a job',
      model: { script: [{ calls: [{ name: 'create_background_job', arguments: { title: 'Nested?', instructions: 'Try to start another job.' } }] }, { text: 'started it' }] },
    });
    expect(turn.status).toBe('completed');
    const completed = turn.events.find((event: { type: string }) => event.type === 'tool.completed');
    expect(completed.output).toMatch(/^Started background job job_/);
    const jobId = completed.details.jobId as string;

    // The job's first turn replays the same script (steps up to the first answer): its
    // create_background_job call finds no such tool.
    const job = await waitUntil('the job to end', async () => {
      const record = (await getJson(`${runtime.baseUrl}/background-jobs/${jobId}`)).body;
      return record.status === 'running' ? undefined : record;
    });
    expect(job).toMatchObject({ status: 'completed', output: 'started it', sourceTurnId: turn.id, agentId: 'boss' });
    const jobTurn = (await (await fetch(`${runtime.baseUrl}/turns/${job.turnIds[0]}/events`, { headers: { accept: 'application/json' } })).json()) as { events: any[] };
    // The job's turn may wait (turn.queued) until this turn has given its agent back.
    expect(jobTurn.events.find((event) => event.type === 'turn.started').tools).toEqual([]);
    expect(jobTurn.events.find((event) => event.type === 'tool.failed').error.code).toBe('unknown_tool');

    const details = await runTurn(runtime, {
      agent: { id: 'boss', tools: { backgroundJobs: true } },
      input: 'how is it going',
      model: {
        script: [
          {
            calls: [
              { name: 'list_background_jobs', arguments: {} },
              { name: 'show_background_job_details', arguments: { job_id: jobId } },
              { name: 'send_message_to_background_job', arguments: { job_id: jobId, text: 'more' } },
              { name: 'show_background_job_details', arguments: { job_id: 'job_of_someone_else' } },
            ],
          },
          { text: 'ok' },
        ],
      },
    });
    const ended = details.events.filter((event: { type: string }) => event.type === 'tool.completed' || event.type === 'tool.failed');
    const outputs = [1, 2, 3, 4].map((call) => ended.find((event: { callId: string }) => event.callId === `call_1_${call}`));
    expect(outputs[0].output).toContain(jobId);
    expect(outputs[1].output).toContain('output:\nstarted it');
    expect(outputs[2]).toMatchObject({ type: 'tool.failed', error: { code: 'tool_error' } });
    expect(outputs[2].error.message).toContain('has already ended (completed)');
    expect(outputs[3].error.message).toContain('no background job with id "job_of_someone_else"');

    // Another agent never sees the job.
    const stranger = await runTurn(runtime, {
      agent: { id: 'stranger', tools: { backgroundJobs: true } },
      input: 'peek',
      model: { script: [{ calls: [{ name: 'show_background_job_details', arguments: { job_id: jobId } }] }, { text: 'ok' }] },
    });
    expect(stranger.events.find((event: { type: string }) => event.type === 'tool.failed').error.message).toContain('no background job');
  }, 30_000);

  it('gives task turns no job or schedule tools', async () => {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        agent: { id: 'tasker', tools: { backgroundJobs: true, schedule: true } },
        kind: 'workflow_task',
        input: 'go',
        task: { instructions: 'Answer.', resultSchema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false } },
        model: { script: [{ calls: [{ name: 'submit_result', arguments: { result: { a: 'x' } } }] }] },
      }),
    });
    const turn = await readJson(response);
    const names = turn.events[0].tools as string[];
    expect(names).not.toContain('create_background_job');
    expect(names).not.toContain('check_back_later');
    expect(names).not.toContain('cron');
  });
});
