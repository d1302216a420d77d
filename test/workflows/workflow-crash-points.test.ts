/* eslint-disable @typescript-eslint/no-unsafe-return -- the run's records and events are read loosely, as JSON */
import { afterAll, describe, expect, it } from 'vitest';
import type { CrashPoint } from '../../src/durable/crash-points.js';
import { crashAt, crashRig, diedAt, onlyWebhookAbout, postAndForget } from '../support/crash-test.js';
import { getJson } from '../support/wait-until.js';
import { runEvents, submitting, waitForRun } from './workflow-kit.js';

const SCRIPT = "const parts = await Promise.all(args.items.map((item) => agent('work on ' + item, { label: 'work' }))); return parts;";
const ITEMS = ['a', 'b', 'c'];
const POINTS: readonly CrashPoint[] = ['workflow.created', 'workflow.step-committed', 'workflow.task-turn-ended', 'workflow.task-settled', 'workflow.finished'];

const rig = crashRig();

/**
 * The service dies by kill -9 at each named point between a workflow's state changes (a test
 * hook, TEST_CRASH_AT, armed only in the first process); a new process on the same store must
 * finish the run once: each task's turn ran once, each task completed once, one end, one webhook.
 */
describe.each(rig.stores)('a workflow run on %s and kill -9 at a named point', (_store, storeEnv) => {
  afterAll(() => rig.close());

  it.concurrent.each(POINTS)('finishes the run once after a crash at %s', async (point) => {
    const { receiver, env: webhookEnv } = await rig.receiver();
    const agentId = `crash-${point.replaceAll('.', '-')}`;
    const env = { ...(await storeEnv()), ...webhookEnv, WORKFLOW_TASK_LEASE_SECONDS: '4' };
    const first = await rig.service({ instanceId: 'wf-crash-a', env: { ...env, ...crashAt(point) } });
    const body = { agent: { id: agentId }, title: 'Crash test', script: SCRIPT, args: { items: ITEMS }, concurrency: 3, model: { tasks: { work: submitting('done {{prompt}}', 100) } }, webhook: { url: receiver.url } };
    // At workflow.created the process dies before it answers.
    const key = { 'idempotency-key': `create-${point}` };
    postAndForget(`${first.baseUrl}/workflows`, body, key);
    await diedAt(first, point);

    const second = await rig.service({ instanceId: 'wf-crash-b', dataDir: first.dataDir, env });
    const runs = (await getJson(`${second.baseUrl}/workflows?agentId=${agentId}`)).body.workflows;
    expect(runs).toHaveLength(1);
    // The client that never had an answer retries with its key: the run the key made, not a second one.
    const retried = await fetch(`${second.baseUrl}/workflows`, { method: 'POST', headers: { 'content-type': 'application/json', ...key }, body: JSON.stringify(body) });
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(((await retried.json()) as { id: string }).id).toBe(runs[0].id);
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

    expect(await onlyWebhookAbout(receiver, run.id)).toMatchObject({ type: 'workflow.completed', status: 'completed' });
    await second.stop();
  }, 120_000);
});
