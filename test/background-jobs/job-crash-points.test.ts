/* eslint-disable @typescript-eslint/no-unsafe-return -- the job's records and events are read loosely, as JSON */
import { afterAll, describe, expect, it } from 'vitest';
import type { CrashPoint } from '../../src/durable/crash-points.js';
import { crashAt, crashStores, diedAt, postAndForget } from '../support/crash-test.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { getJson, waitUntil } from '../support/wait-until.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type WebhookReceiver } from '../support/webhook-receiver.js';

const POINTS: readonly CrashPoint[] = ['background-job.created', 'background-job.turn-recorded', 'background-job.turn-ended', 'background-job.turn-settled', 'background-job.finished'];

const { stores: STORES, dropSchemas } = crashStores();

/**
 * The service dies by kill -9 at each named point of a background job (TEST_CRASH_AT, armed in
 * the first process only); a new process under another INSTANCE_ID on the same store ends the
 * job once: its turn ran once, one end event, one webhook.
 */
describe.each(STORES)('a background job on %s and kill -9 at a named point', (_store, storeEnv) => {
  const processes: ServiceProcess[] = [];
  const receivers: WebhookReceiver[] = [];
  afterAll(async () => {
    for (const service of processes) await service.stop();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await dropSchemas();
  });

  it.concurrent.each(POINTS)('ends the job once after a crash at %s', async (point) => {
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    const agentId = `crash-${point.replaceAll('.', '-')}`;
    const env = { ...(await storeEnv()), WEBHOOK_SECRET: TEST_WEBHOOK_SECRET, WEB_FETCH_ALLOW_HOSTS: receiver.host };
    const first = await startServiceProcess({ instanceId: 'job-crash-a', env: { ...env, ...crashAt(point) } });
    processes.push(first);
    const body = { agent: { id: agentId }, title: 'Crash test', instructions: 'Answer once.', model: { script: [{ delayMs: 200, text: 'the answer' }] }, webhook: { url: receiver.url } };
    // At background-job.created the process dies before it answers.
    postAndForget(`${first.baseUrl}/background-jobs`, body);
    await diedAt(first, point);

    const second = await startServiceProcess({ instanceId: 'job-crash-b', dataDir: first.dataDir, env });
    processes.push(second);
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

    const ofJob = () => receiver.received.filter((delivery) => (JSON.parse(delivery.body) as { id: string }).id === jobId);
    await waitUntil('the job webhook', () => (ofJob().length > 0 ? true : undefined), 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(ofJob()).toHaveLength(1);
    expect(JSON.parse(ofJob()[0]?.body ?? '{}')).toMatchObject({ type: 'background_job.completed', status: 'completed' });
    await second.stop();
  }, 120_000);
});
