/* eslint-disable @typescript-eslint/no-unsafe-return -- the run's records and events are read loosely, as JSON */
import { afterAll, describe, expect, it } from 'vitest';
import type { CrashPoint } from '../../src/durable/crash-points.js';
import { crashAt, crashStores, diedAt, postAndForget } from '../support/crash-test.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { getJson, waitUntil } from '../support/wait-until.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type WebhookReceiver } from '../support/webhook-receiver.js';
import { runEvents, submitting, waitForRun } from './workflow-kit.js';

const SCRIPT = "const parts = await Promise.all(args.items.map((item) => agent('work on ' + item, { label: 'work' }))); return parts;";
const ITEMS = ['a', 'b', 'c'];
const POINTS: readonly CrashPoint[] = ['workflow.created', 'workflow.step-committed', 'workflow.task-turn-ended', 'workflow.task-settled', 'workflow.finished'];

const { stores: STORES, dropSchemas } = crashStores();

/**
 * The service dies by kill -9 at each named point between a workflow's state changes (a test
 * hook, TEST_CRASH_AT, armed only in the first process); a new process on the same store must
 * finish the run once: each task's turn ran once, each task completed once, one end, one webhook.
 */
describe.each(STORES)('a workflow run on %s and kill -9 at a named point', (_store, storeEnv) => {
  const processes: ServiceProcess[] = [];
  const receivers: WebhookReceiver[] = [];
  afterAll(async () => {
    for (const service of processes) await service.stop();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await dropSchemas();
  });

  it.concurrent.each(POINTS)('finishes the run once after a crash at %s', async (point) => {
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    const agentId = `crash-${point.replaceAll('.', '-')}`;
    const env = { ...(await storeEnv()), WEBHOOK_SECRET: TEST_WEBHOOK_SECRET, WEB_FETCH_ALLOW_HOSTS: receiver.host, WORKFLOW_TASK_LEASE_SECONDS: '4' };
    const first = await startServiceProcess({ instanceId: 'wf-crash-a', env: { ...env, ...crashAt(point) } });
    processes.push(first);
    const body = { agent: { id: agentId }, title: 'Crash test', script: SCRIPT, args: { items: ITEMS }, concurrency: 3, model: { tasks: { work: submitting('done {{prompt}}', 100) } }, webhook: { url: receiver.url } };
    // At workflow.created the process dies before it answers.
    postAndForget(`${first.baseUrl}/workflows`, body);
    await diedAt(first, point);

    const second = await startServiceProcess({ instanceId: 'wf-crash-b', dataDir: first.dataDir, env });
    processes.push(second);
    const runs = (await getJson(`${second.baseUrl}/workflows?agentId=${agentId}`)).body.workflows;
    expect(runs).toHaveLength(1);
    const run = await waitForRun(second.baseUrl, runs[0].id, undefined, 60_000);
    expect(run.status).toBe('completed');
    expect(run.result).toEqual(ITEMS.map((item) => `done work on ${item}`));

    const events = await runEvents(second.baseUrl, run.id);
    for (let seq = 1; seq <= ITEMS.length; seq += 1) {
      const ofTask = events.filter((event) => event.taskId === `${run.id}.${seq}`);
      expect(ofTask.filter((event) => event.type === 'task.completed'), `task ${seq}`).toHaveLength(1);
      // A turn the crash cut off (interrupted) is followed by one more; never two for one turn.
      const started = ofTask.filter((event) => event.type === 'task.started').map((event) => event.turnId);
      expect(new Set(started).size, `task ${seq}`).toBe(started.length);
    }
    expect(events.filter((event) => event.type === 'workflow.completed')).toHaveLength(1);
    // Each task's turn ran once: an accepted result stored before the crash is used, not run again.
    const turns: { status: string }[] = (await getJson(`${second.baseUrl}/turns?agentId=${agentId}`)).body.turns;
    expect(turns.filter((turn) => turn.status === 'completed')).toHaveLength(ITEMS.length);
    expect(turns.filter((turn) => turn.status !== 'completed' && turn.status !== 'interrupted')).toEqual([]);

    const ofRun = () => receiver.received.filter((delivery) => (JSON.parse(delivery.body) as { id: string }).id === run.id);
    await waitUntil('the run webhook', () => (ofRun().length > 0 ? true : undefined), 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(ofRun()).toHaveLength(1);
    expect(JSON.parse(ofRun()[0]?.body ?? '{}')).toMatchObject({ type: 'workflow.completed', status: 'completed' });
    await second.stop();
  }, 120_000);
});
