import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestRuntime } from '../support/test-runtime.js';
import { decide, startStreamingTurn, waitForEnd, waitForPending } from './approval-test-kit.js';

describe('a graceful shutdown with a parked turn', () => {
  const folders: string[] = [];
  afterAll(async () => {
    await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
  });

  it('ends the streams that follow it, leaves it waiting, and the next process resumes it', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-parked-close-'));
    folders.push(dataDir);
    const first = await startTestRuntime({ dataDir });
    const { stream, turnId } = await startStreamingTurn(first.baseUrl, {
      agent: { id: 'closer', tools: { computer: true }, approvals: { destructive: 'ask' } },
      input: 'write',
      model: { script: [{ calls: [{ name: 'write_file', arguments: { path: 'c.txt', content: 'C' } }] }, { text: 'closed and done' }] },
    });
    const record = await waitForPending(first.baseUrl, turnId);
    // Shutdown does not wait for a parked turn (it would wait a day) and does not cancel it.
    await first.close({ keepData: true });
    await stream.ended;
    expect(stream.messages.some((message) => message.event === 'turn.cancelled')).toBe(false);

    const second = await startTestRuntime({ dataDir });
    try {
      expect(await waitForPending(second.baseUrl, turnId)).toMatchObject({ status: 'requires_action' });
      const [pending] = record.pendingApprovals;
      expect((await decide(second.baseUrl, turnId, pending.callId, { decision: 'approve', argumentsHash: pending.argumentsHash })).status).toBe(202);
      expect(await waitForEnd(second.baseUrl, turnId)).toMatchObject({ status: 'completed', output: 'closed and done' });
    } finally {
      await second.close();
    }
  });
});
