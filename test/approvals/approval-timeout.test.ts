import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestRuntime } from '../support/test-runtime.js';
import { decide, eventsOf, expectContiguousSeqs, startStreamingTurn, storedEvents, waitForEnd, waitForPending } from './approval-test-kit.js';

const turn = (agentId: string) => ({
  agent: { id: agentId, tools: { computer: true }, approvals: { tools: { write_file: 'ask' } } },
  input: 'write',
  model: { script: [{ calls: [{ name: 'write_file', arguments: { path: 'late.txt', content: 'L' } }] }, { text: 'gave up' }] },
});

describe('APPROVAL_TIMEOUT_MS', () => {
  const folders: string[] = [];
  afterAll(async () => {
    await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
  });

  it('ends a wait nobody decided as a denial, and the turn goes on', async () => {
    const runtime = await startTestRuntime({ env: { APPROVAL_TIMEOUT_MS: '300' } });
    try {
      const { stream, turnId } = await startStreamingTurn(runtime.baseUrl, turn('slow-approver'));
      const requested = JSON.parse((await stream.waitFor((message) => message.event === 'tool.approval_requested')).data);
      // The wait is APPROVAL_TIMEOUT_MS from when the call asked (checked exactly below, in the
      // denial); the event is stamped when it is stored, which a loaded machine may do later.
      expect(Date.parse(requested.expiresAt) - Date.parse(requested.at)).toBeLessThanOrEqual(300);
      await stream.ended;
      const events = eventsOf(stream);
      expectContiguousSeqs(events);
      expect(events.find((event) => event['type'] === 'tool.approval_decided')).toMatchObject({ decision: 'deny', reason: 'timeout' });
      const failed = events.find((event) => event['type'] === 'tool.failed');
      expect(failed).toMatchObject({ error: { code: 'denied' } });
      expect(failed?.['output']).toContain('nobody approved this call within 300 ms');
      expect(events.at(-1)).toMatchObject({ type: 'turn.completed', output: 'gave up' });
      const late = await decide(runtime.baseUrl, turnId, requested.callId, { decision: 'approve', argumentsHash: requested.argumentsHash });
      expect(late).toMatchObject({ status: 409, body: { error: { code: 'approval_not_pending' } } });
    } finally {
      await runtime.close();
    }
  });

  it('ends a wait that ran out while the service was down, once it is back', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-timeout-'));
    folders.push(dataDir);
    // The turn parks, and the service stops with it waiting: 5 s is ample time to stop it before
    // its own timer would end the wait, however loaded the machine.
    const first = await startTestRuntime({ dataDir, env: { APPROVAL_TIMEOUT_MS: '5000' } });
    const { stream, turnId } = await startStreamingTurn(first.baseUrl, turn('down-approver'));
    const record = await waitForPending(first.baseUrl, turnId);
    stream.destroy();
    await first.close({ keepData: true });
    const wait = Date.parse(record.pendingApprovals[0].expiresAt) - Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait) + 100));

    const restartedAt = new Date().toISOString();
    const second = await startTestRuntime({ dataDir, env: { APPROVAL_TIMEOUT_MS: '5000' } });
    try {
      expect(await waitForEnd(second.baseUrl, turnId)).toMatchObject({ status: 'completed', output: 'gave up' });
      const events = await storedEvents(second.baseUrl, turnId);
      expectContiguousSeqs(events);
      const decided = events.find((event) => event['type'] === 'tool.approval_decided');
      expect(decided).toMatchObject({ reason: 'timeout' });
      // Decided by the restarted service, not by the first one before it stopped.
      expect(decided?.['at'] >= restartedAt).toBe(true);
    } finally {
      await second.close();
    }
  }, 60_000);
});
