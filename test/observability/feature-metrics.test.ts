import { createServer, type Server } from 'node:http';
import { mkdtemp, chmod } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, expectedHash, startStreamingTurn, waitForEnd, waitForPending } from '../approvals/approval-test-kit.js';
import { createPostgresSchema } from '../support/postgres-schema.js';
import { openStream } from '../support/sse-client.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { parseMetrics, sampleValue } from '../support/turn-waits.js';
import { postWorkflow, submitting, waitForRun } from '../workflows/workflow-kit.js';

const SECRET = `whsec_${Buffer.from('a test key of enough bytes').toString('base64')}`;

type Samples = ReturnType<typeof parseMetrics>;

async function scrape(runtime: TestRuntime): Promise<Samples> {
  const response = await fetch(`${runtime.baseUrl}/metrics`);
  expect(response.status).toBe(200);
  return parseMetrics(await response.text());
}

const delta = (before: Samples, after: Samples, name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);

/** A receiver on 127.0.0.1 that answers the statuses it is given, then 200. */
async function startReceiver(statuses: number[]): Promise<{ server: Server; url: string; host: string; received: string[] }> {
  const received: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      response.statusCode = statuses.shift() ?? 200;
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/hooks`, host: `127.0.0.1:${port}`, received };
}

async function until<T>(read: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const writeTurn = (agentId: string) => ({
  agent: { id: agentId, tools: { computer: true }, approvals: { destructive: 'ask' } },
  input: 'write a.txt',
  model: { script: [{ calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'A' } }] }, { text: 'done' }] },
});
const hash = expectedHash({ path: 'a.txt', content: 'A' });

describe('metrics of approvals, queued turns, workflow tasks and webhooks', () => {
  let runtime: TestRuntime;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver([500]);
    runtime = await startTestRuntime({ env: { WEBHOOK_SECRET: SECRET, WEB_FETCH_ALLOW_HOSTS: receiver.host } });
  });
  afterAll(async () => {
    await runtime.close();
    receiver.server.close();
  });

  it('counts waiting approvals from the store and times each wait by decision', async () => {
    const before = await scrape(runtime);
    expect(sampleValue(before, 'turn_runtime_approvals_waiting')).toBe(0);
    const approved = await startStreamingTurn(runtime.baseUrl, writeTurn('metrics-approve'));
    const denied = await startStreamingTurn(runtime.baseUrl, writeTurn('metrics-deny'));
    await waitForPending(runtime.baseUrl, approved.turnId);
    await waitForPending(runtime.baseUrl, denied.turnId);
    expect(sampleValue(await scrape(runtime), 'turn_runtime_approvals_waiting')).toBe(2);

    expect((await decide(runtime.baseUrl, approved.turnId, 'call_1_1', { decision: 'approve', argumentsHash: hash })).status).toBe(202);
    expect((await waitForEnd(runtime.baseUrl, approved.turnId)).status).toBe('completed');
    expect(sampleValue(await scrape(runtime), 'turn_runtime_approvals_waiting')).toBe(1);
    // A decision that is refused (wrong hash) is no decision: nothing is timed.
    expect((await decide(runtime.baseUrl, denied.turnId, 'call_1_1', { decision: 'deny', argumentsHash: '0'.repeat(64) })).status).toBe(422);
    expect((await decide(runtime.baseUrl, denied.turnId, 'call_1_1', { decision: 'deny', argumentsHash: hash })).status).toBe(202);
    await waitForEnd(runtime.baseUrl, denied.turnId);
    const after = await scrape(runtime);
    expect(sampleValue(after, 'turn_runtime_approvals_waiting')).toBe(0);
    expect(delta(before, after, 'turn_runtime_approval_wait_seconds_count', { decision: 'approve' })).toBe(1);
    expect(delta(before, after, 'turn_runtime_approval_wait_seconds_count', { decision: 'deny' })).toBe(1);
    expect(delta(before, after, 'turn_runtime_approval_wait_seconds_count', { decision: 'timeout' })).toBe(0);
    const ids = new Set([approved.turnId, denied.turnId, 'metrics-approve', 'metrics-deny']);
    expect(after.some((sample) => Object.values(sample.labels).some((value) => ids.has(value)))).toBe(false);
    approved.stream.destroy();
    denied.stream.destroy();
  });

  it('does not count the calls of a parked turn that was cancelled', async () => {
    const parked = await startStreamingTurn(runtime.baseUrl, writeTurn('metrics-cancel'));
    await waitForPending(runtime.baseUrl, parked.turnId);
    expect(sampleValue(await scrape(runtime), 'turn_runtime_approvals_waiting')).toBe(1);
    expect((await fetch(`${runtime.baseUrl}/turns/${parked.turnId}/cancel`, { method: 'POST' })).status).toBe(202);
    expect((await waitForEnd(runtime.baseUrl, parked.turnId)).status).toBe('cancelled');
    expect(sampleValue(await scrape(runtime), 'turn_runtime_approvals_waiting')).toBe(0);
    parked.stream.destroy();
  });

  it("counts turns waiting in an agent's queue", async () => {
    const first = await openStream({ url: `${runtime.baseUrl}/turns`, body: { agent: { id: 'metrics-queue' }, input: 'a', model: { script: [{ text: 'first', delayMs: 30_000 }] } } });
    await first.waitFor((message) => message.event === 'turn.started');
    const second = await openStream({ url: `${runtime.baseUrl}/turns`, body: { agent: { id: 'metrics-queue' }, input: 'b', model: { script: [{ text: 'second' }] } } });
    await second.waitFor((message) => message.event === 'turn.queued');
    expect(sampleValue(await scrape(runtime), 'turn_runtime_turns_queued')).toBe(1);
    const firstId = String(first.response.headers['turn-id']);
    const secondId = String(second.response.headers['turn-id']);
    expect((await fetch(`${runtime.baseUrl}/turns/${firstId}/cancel`, { method: 'POST' })).status).toBe(202);
    expect((await waitForEnd(runtime.baseUrl, secondId)).status).toBe('completed');
    expect(sampleValue(await scrape(runtime), 'turn_runtime_turns_queued')).toBe(0);
    first.destroy();
    second.destroy();
  });

  it('counts workflow tasks by outcome and their attempts, and the run webhook by subject', async () => {
    const before = await scrape(runtime);
    const started = await postWorkflow(runtime.baseUrl, {
      script: "return [await agent('never answers', { label: 'mute' }), await agent('second try works', { label: 'flaky' })];",
      model: { tasks: { mute: [{ text: 'no submission' }, { text: 'still none' }], 'flaky#1': [{ text: 'no' }, { text: 'no' }], flaky: submitting('ok on {{attempt}}') } },
      webhook: { url: receiver.url },
    });
    expect(started.status).toBe(201);
    const run = await waitForRun(runtime.baseUrl, started.body.id);
    expect(run).toMatchObject({ status: 'completed', counts: { succeeded: 1, failed: 1 } });
    const after = await until(async () => {
      const samples = await scrape(runtime);
      return sampleValue(samples, 'turn_runtime_webhook_deliveries_total', { subject: 'workflow', outcome: 'retrying' }) -
        sampleValue(before, 'turn_runtime_webhook_deliveries_total', { subject: 'workflow', outcome: 'retrying' }) +
        sampleValue(samples, 'turn_runtime_webhook_deliveries_total', { subject: 'workflow', outcome: 'delivered' }) -
        sampleValue(before, 'turn_runtime_webhook_deliveries_total', { subject: 'workflow', outcome: 'delivered' }) >=
        2
        ? samples
        : undefined;
    }, 'the run webhook to be retried and delivered');
    expect(delta(before, after, 'turn_runtime_workflow_tasks_total', { outcome: 'succeeded' })).toBe(1);
    expect(delta(before, after, 'turn_runtime_workflow_tasks_total', { outcome: 'failed' })).toBe(1);
    expect(delta(before, after, 'turn_runtime_workflow_tasks_total', { outcome: 'cancelled' })).toBe(0);
    expect(delta(before, after, 'turn_runtime_workflow_task_attempts_total')).toBe(5);
    // The receiver answered 500 once, then 200.
    expect(delta(before, after, 'turn_runtime_webhook_deliveries_total', { subject: 'workflow', outcome: 'retrying' })).toBe(1);
    expect(delta(before, after, 'turn_runtime_webhook_deliveries_total', { subject: 'workflow', outcome: 'delivered' })).toBe(1);
    expect(after.some((sample) => Object.values(sample.labels).includes(run.id))).toBe(false);
  });

  it('counts a turn webhook delivered, by subject', async () => {
    const before = await scrape(runtime);
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ agent: { id: 'metrics-hooked' }, input: 'hi', model: { script: [{ text: 'done' }] }, webhook: { url: receiver.url } }),
    });
    expect(response.status).toBe(200);
    await readJson(response);
    const after = await until(async () => {
      const samples = await scrape(runtime);
      return delta(before, samples, 'turn_runtime_webhook_deliveries_total', { subject: 'turn', outcome: 'delivered' }) >= 1 ? samples : undefined;
    }, 'the turn webhook');
    expect(delta(before, after, 'turn_runtime_webhook_deliveries_total', { subject: 'turn', outcome: 'delivered' })).toBe(1);
    expect(delta(before, after, 'turn_runtime_webhook_deliveries_total', { subject: 'turn', outcome: 'failed' })).toBe(0);
  });
});

describe('approval metrics across a restart and a timeout', () => {
  it('still counts a parked call after the process restarts, and times a wait that ran out as timeout', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-metrics-'));
    await chmod(dataDir, 0o711);
    const first = await startTestRuntime({ dataDir });
    let turnId: string;
    try {
      const parked = await startStreamingTurn(first.baseUrl, writeTurn('metrics-restart'));
      turnId = parked.turnId;
      await waitForPending(first.baseUrl, turnId);
      expect(sampleValue(await scrape(first), 'turn_runtime_approvals_waiting')).toBe(1);
      parked.stream.destroy();
    } finally {
      await first.close({ keepData: true });
    }
    // A new process on the same store: nothing in memory, the count is still right. Its waits now run out at once.
    const second = await startTestRuntime({ dataDir, env: { APPROVAL_TIMEOUT_MS: '100' } });
    try {
      const before = await scrape(second);
      expect(sampleValue(before, 'turn_runtime_approvals_waiting')).toBe(1);
      expect((await decide(second.baseUrl, turnId, 'call_1_1', { decision: 'approve', argumentsHash: hash })).status).toBe(202);
      expect((await waitForEnd(second.baseUrl, turnId)).status).toBe('completed');
      const timedOut = await startStreamingTurn(second.baseUrl, writeTurn('metrics-timeout'));
      // The wait runs out: the call is denied and the model goes on to its answer.
      expect((await waitForEnd(second.baseUrl, timedOut.turnId)).status).toBe('completed');
      const after = await scrape(second);
      expect(sampleValue(after, 'turn_runtime_approvals_waiting')).toBe(0);
      expect(sampleValue(after, 'turn_runtime_approval_wait_seconds_count', { decision: 'timeout' })).toBe(1);
      expect(sampleValue(after, 'turn_runtime_approval_wait_seconds_count', { decision: 'deny' })).toBe(0);
      // This process timed the approval it took, though the wait began in the one before.
      expect(sampleValue(after, 'turn_runtime_approval_wait_seconds_count', { decision: 'approve' })).toBe(1);
      timedOut.stream.destroy();
    } finally {
      await second.close();
    }
  });
});

describe('webhook metrics of a refused delivery', () => {
  it('counts a delivery the guard refuses (a name resolving to a private address) as refused, once', async () => {
    const runtime = await startTestRuntime({
      env: { WEBHOOK_SECRET: SECRET },
      lookup: (hostname) => Promise.resolve(hostname === 'hooks.example' ? [{ address: '127.0.0.1', family: 4 }] : []),
    });
    try {
      const response = await fetch(`${runtime.baseUrl}/turns`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ agent: { id: 'metrics-refused' }, input: 'hi', model: { script: [{ text: 'done' }] }, webhook: { url: 'https://hooks.example/hook' } }),
      });
      expect(response.status).toBe(200);
      const turn = await readJson(response);
      const samples = await until(async () => {
        const scraped = await scrape(runtime);
        return sampleValue(scraped, 'turn_runtime_webhook_deliveries_total', { subject: 'turn', outcome: 'refused' }) > 0 ? scraped : undefined;
      }, 'the refused attempt');
      expect((await runtime.webhooks.listAttempts('turn', turn.id)).map((attempt) => attempt.outcome)).toEqual(['failed']);
      expect(sampleValue(samples, 'turn_runtime_webhook_deliveries_total', { subject: 'turn', outcome: 'refused' })).toBe(1);
      expect(sampleValue(samples, 'turn_runtime_webhook_deliveries_total', { subject: 'turn', outcome: 'retrying' })).toBe(0);
      expect(sampleValue(samples, 'turn_runtime_webhook_deliveries_total', { subject: 'turn', outcome: 'delivered' })).toBe(0);
    } finally {
      await runtime.close();
    }
  });
});

describe('approval metrics on PostgreSQL replicas', () => {
  it('shows the same waiting count on every replica of a shared store', async () => {
    const schema = await createPostgresSchema();
    const replicas: TestRuntime[] = [];
    try {
      for (const instance of ['metrics-a', 'metrics-b']) replicas.push(await schema.whileSchemasAreStable(() => startTestRuntime({ env: { DATABASE_URL: schema.url, INSTANCE_ID: instance } })));
      const [a, b] = replicas;
      if (a === undefined || b === undefined) throw new Error('two replicas expected');
      const parked = await startStreamingTurn(a.baseUrl, writeTurn('metrics-replicas'));
      await waitForPending(a.baseUrl, parked.turnId);
      expect(sampleValue(await scrape(a), 'turn_runtime_approvals_waiting')).toBe(1);
      expect(sampleValue(await scrape(b), 'turn_runtime_approvals_waiting')).toBe(1);
      expect((await decide(b.baseUrl, parked.turnId, 'call_1_1', { decision: 'approve', argumentsHash: hash })).status).toBe(202);
      expect((await waitForEnd(a.baseUrl, parked.turnId)).status).toBe('completed');
      expect(sampleValue(await scrape(a), 'turn_runtime_approvals_waiting')).toBe(0);
      // The wait is timed where it was decided.
      expect(sampleValue(await scrape(b), 'turn_runtime_approval_wait_seconds_count', { decision: 'approve' })).toBe(1);
      expect(sampleValue(await scrape(a), 'turn_runtime_approval_wait_seconds_count', { decision: 'approve' })).toBe(0);
      parked.stream.destroy();
    } finally {
      for (const replica of replicas) await replica.close();
      await schema.drop();
    }
  });
});
