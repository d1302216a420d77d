/* eslint-disable @typescript-eslint/no-unsafe-return -- the pollers hand back JSON answers, read loosely like the rest of these assertions */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeResponsesProvider } from '../support/fake-responses-provider.js';
import { startServiceProcess } from '../support/service-process.js';
import { startTestRuntime } from '../support/test-runtime.js';
import { getJson, postJson, waitUntil } from '../support/wait-until.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET } from '../support/webhook-receiver.js';

describe('a background job and kill -9 of the service', () => {
  const folders: string[] = [];
  afterAll(async () => {
    await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
  });

  it('goes on after the restart: the cut-off turn is reported, the next turn is told, the webhook comes at the end', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-job-restart-'));
    folders.push(dataDir);
    const provider = await startFakeResponsesProvider();
    const receiver = await startWebhookReceiver();
    const env = {
      DATA_DIR: dataDir,
      INSTANCE_ID: 'job-restart',
      OPENAI_BASE_URL: provider.baseUrl,
      OPENAI_API_KEY: 'sk-test',
      MODEL_MAX_RETRIES: '0',
      WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
      WEB_FETCH_ALLOW_HOSTS: receiver.host,
    };
    // The first model call never answers: the process dies during it.
    provider.enqueue({ text: 'never', headersDelayMs: 120_000 }, { text: 'finished after the restart' });
    const first = await startServiceProcess({ instanceId: 'job-restart', env });
    let jobId: string;
    try {
      const created = await postJson(`${first.baseUrl}/background-jobs`, {
        agent: { id: 'survivor' },
        title: 'Long haul',
        instructions: 'Do the long thing.',
        model: { name: 'fake-model' },
        webhook: { url: receiver.url },
      });
      expect(created.status).toBe(201);
      jobId = created.body.id as string;
      await provider.waitForRequest(1);
      await first.crash();
    } finally {
      first.child.kill('SIGKILL');
    }

    const runtime = await startTestRuntime({ dataDir, env });
    try {
      const done = await waitUntil('the job to end after the restart', async () => {
        const record = (await getJson(`${runtime.baseUrl}/background-jobs/${jobId}`)).body;
        return record.status === 'running' ? undefined : record;
      });
      expect(done).toMatchObject({ status: 'completed', output: 'finished after the restart' });
      expect(done.turns.map((turn: { outcome: string }) => turn.outcome)).toEqual(['interrupted', 'completed']);
      expect((await getJson(`${runtime.baseUrl}/turns/${done.turnIds[0]}`)).body.status).toBe('interrupted');
      const secondInput = JSON.stringify(provider.requests[1]?.body.input);
      expect(secondInput).toContain('Do the long thing.');
      expect(secondInput).toContain('cut off');

      const delivery = await waitUntil('the webhook', () => Promise.resolve(receiver.received[0]));
      const headers = { 'webhook-id': String(delivery.headers['webhook-id']), 'webhook-timestamp': String(delivery.headers['webhook-timestamp']), 'webhook-signature': String(delivery.headers['webhook-signature']) };
      expect(new Webhook(TEST_WEBHOOK_SECRET).verify(delivery.body, headers)).toEqual({ type: 'background_job.completed', id: jobId, agentId: 'survivor', status: 'completed' });
      const events = await waitUntil('the webhook event', async () => {
        const body = (await (await fetch(`${runtime.baseUrl}/background-jobs/${jobId}/events`, { headers: { accept: 'application/json' } })).json()) as { events: { type: string }[] };
        return body.events.some((event) => event.type === 'webhook.delivered') ? body.events : undefined;
      });
      expect(events.map((event) => event.type)).toEqual(['job.started', 'job.turn_started', 'job.turn_finished', 'job.turn_started', 'job.turn_finished', 'job.completed', 'webhook.delivered']);
      expect(receiver.received).toHaveLength(1);
    } finally {
      await runtime.close({ keepData: true });
      await provider.close();
      await receiver.close();
    }
  }, 90_000);
});
