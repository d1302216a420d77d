import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres-schema.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { decide, eventsOf, expectContiguousSeqs, startStreamingTurn, storedEvents, waitForPending } from './approval-test-kit.js';

/** Two replicas sharing one PostgreSQL schema: a parked turn belongs to no replica. */
describe('a parked turn on PostgreSQL replicas', () => {
  let schema: PostgresSchema;
  let first: TestRuntime;
  let second: TestRuntime;
  beforeAll(async () => {
    schema = await createPostgresSchema();
    first = await schema.whileSchemasAreStable(() => startTestRuntime({ env: { DATABASE_URL: schema.url, INSTANCE_ID: 'cancel-a' } }));
    second = await schema.whileSchemasAreStable(() => startTestRuntime({ env: { DATABASE_URL: schema.url, INSTANCE_ID: 'cancel-b' } }));
  });
  afterAll(async () => {
    await first.close();
    await second.close();
    await schema.drop();
  });

  it('is cancelled through the other replica, and its call is then no longer pending', async () => {
    const { stream, turnId } = await startStreamingTurn(first.baseUrl, {
      agent: { id: 'pg-cancel', tools: { computer: true }, approvals: { destructive: 'ask' } },
      input: 'write',
      model: { script: [{ calls: [{ name: 'write_file', arguments: { path: 'never.txt', content: 'N' } }] }] },
    });
    const record = await waitForPending(second.baseUrl, turnId);
    const cancel = await fetch(`${second.baseUrl}/turns/${turnId}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(202);
    expect(await readJson(cancel)).toMatchObject({ status: 'cancelled' });
    await stream.ended;
    expect(eventsOf(stream).at(-1)).toMatchObject({ type: 'turn.cancelled', reason: 'cancel_requested' });
    expectContiguousSeqs(await storedEvents(first.baseUrl, turnId));
    const [pending] = record.pendingApprovals;
    expect((await decide(first.baseUrl, turnId, pending.callId, { decision: 'approve', argumentsHash: pending.argumentsHash })).status).toBe(409);
  });

  it('takes exactly one decision when a decision and a cancel race on two replicas', async () => {
    const { stream, turnId } = await startStreamingTurn(first.baseUrl, {
      agent: { id: 'pg-race', tools: { computer: true }, approvals: { destructive: 'ask' } },
      input: 'write',
      model: { script: [{ calls: [{ name: 'write_file', arguments: { path: 'race.txt', content: 'R' } }] }, { text: 'written' }] },
    });
    const [pending] = (await waitForPending(second.baseUrl, turnId)).pendingApprovals;
    const [decided, cancelled] = await Promise.all([
      decide(first.baseUrl, turnId, pending.callId, { decision: 'approve', argumentsHash: pending.argumentsHash }),
      fetch(`${second.baseUrl}/turns/${turnId}/cancel`, { method: 'POST' }),
    ]);
    await stream.ended;
    const events = await storedEvents(second.baseUrl, turnId);
    expectContiguousSeqs(events);
    const terminal = events.at(-1);
    if (decided.status === 202) {
      // The decision came first: the cancel met a running turn (202 here, or 409 between the claim and the run).
      expect(events.some((event) => event['type'] === 'tool.approval_decided')).toBe(true);
      expect([202, 409]).toContain(cancelled.status);
    } else {
      expect(decided.body).toMatchObject({ error: { code: 'approval_not_pending' } });
      expect(cancelled.status).toBe(202);
      expect(terminal).toMatchObject({ type: 'turn.cancelled' });
    }
    expect(events.filter((event) => ['turn.completed', 'turn.failed', 'turn.cancelled'].includes(event['type'] as string))).toHaveLength(1);
  });
});
