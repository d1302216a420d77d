/* eslint-disable @typescript-eslint/no-unsafe-return -- the job's records and events are read loosely, as JSON */
import { afterAll, describe, expect, it } from 'vitest';
import type { CrashPoint } from '../../src/durable/crash-points.js';
import { crashAt, crashRig, diedAt, onlyWebhookAbout, postAndForget } from '../support/crash-test.js';
import { getJson, waitUntil } from '../support/wait-until.js';

const POINTS: readonly CrashPoint[] = ['background-job.created', 'background-job.turn-recorded', 'background-job.turn-ended', 'background-job.turn-settled', 'background-job.finished'];

const rig = crashRig();

/**
 * The service dies by kill -9 at each named point of a background job (TEST_CRASH_AT, armed in
 * the first process only); a new process under another INSTANCE_ID on the same store ends the
 * job once: its turn ran once, one end event, one webhook.
 */
describe.each(rig.stores)('a background job on %s and kill -9 at a named point', (_store, storeEnv) => {
  afterAll(() => rig.close());

  it.concurrent.each(POINTS)('ends the job once after a crash at %s', async (point) => {
    const { receiver, env: webhookEnv } = await rig.receiver();
    const agentId = `crash-${point.replaceAll('.', '-')}`;
    const env = { ...(await storeEnv()), ...webhookEnv };
    const first = await rig.service({ instanceId: 'job-crash-a', env: { ...env, ...crashAt(point) } });
    const body = { agent: { id: agentId }, title: 'Crash test', instructions: 'Answer once.', model: { script: [{ delayMs: 200, text: 'the answer' }] }, webhook: { url: receiver.url } };
    // At background-job.created the process dies before it answers.
    postAndForget(`${first.baseUrl}/background-jobs`, body);
    await diedAt(first, point);

    const second = await rig.service({ instanceId: 'job-crash-b', dataDir: first.dataDir, env });
    const jobs = (await getJson(`${second.baseUrl}/background-jobs?agentId=${agentId}`)).body.backgroundJobs;
    expect(jobs).toHaveLength(1);
    const jobId = jobs[0].id as string;
    const done = await waitUntil(
      'the job to end',
      async () => {
        const record = (await getJson(`${second.baseUrl}/background-jobs/${jobId}`)).body;
        return record.status === 'running' ? undefined : record;
      },
      60_000,
    );
    expect(done).toMatchObject({ status: 'completed', output: 'the answer' });

    const answer = (await (await fetch(`${second.baseUrl}/background-jobs/${jobId}/events`, { headers: { accept: 'application/json' } })).json()) as { events: { type: string; turnId?: string }[] };
    const { events } = answer;
    expect(events.filter((event) => event.type === 'job.started')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'job.completed')).toHaveLength(1);
    const started = events.filter((event) => event.type === 'job.turn_started').map((event) => event.turnId);
    expect(new Set(started).size).toBe(started.length);
    for (const turnId of started) expect(events.filter((event) => event.type === 'job.turn_finished' && event.turnId === turnId), String(turnId)).toHaveLength(1);
    // The turn that answered ran once; a turn the crash cut off, if any, ended interrupted.
    const turns: { status: string }[] = (await getJson(`${second.baseUrl}/turns?agentId=${agentId}`)).body.turns;
    expect(turns.filter((turn) => turn.status === 'completed')).toHaveLength(1);
    expect(turns.filter((turn) => turn.status !== 'completed' && turn.status !== 'interrupted')).toEqual([]);

    expect(await onlyWebhookAbout(receiver, jobId)).toMatchObject({ type: 'background_job.completed', status: 'completed' });
    await second.stop();
  }, 120_000);
});
