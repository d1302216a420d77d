import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
import { startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { decide, eventsOf, expectContiguousSeqs, startStreamingTurn, waitForPending } from './approval-test-kit.js';

describe('a response with calls that wait and calls that do not (OpenAI Responses provider)', () => {
  let provider: FakeResponsesProvider;
  let runtime: TestRuntime;
  beforeAll(async () => {
    provider = await startFakeResponsesProvider();
    runtime = await startTestRuntime({ env: { OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-test-secret', MODEL_MAX_RETRIES: '1' } });
  });
  afterAll(async () => {
    await runtime.close();
    await provider.close();
  });

  it('runs the others at once, decides the parked ones one by one, and sends every output back in call order', async () => {
    const home = path.join(runtime.dataDir, 'agents', 'mixed', 'home');
    await mkdir(home, { recursive: true });
    await writeFile(path.join(home, 'r1.txt'), 'one');
    await writeFile(path.join(home, 'r2.txt'), 'two');
    const before = provider.requests.length;
    provider.enqueue(
      {
        calls: [
          { name: 'read_file', callId: 'call_r1', arguments: '{"path":"r1.txt"}' },
          { name: 'write_file', callId: 'call_w1', arguments: '{"path":"w1.txt","content":"W1"}' },
          { name: 'read_file', callId: 'call_r2', arguments: '{"path":"r2.txt"}' },
          { name: 'write_file', callId: 'call_w2', arguments: '{"content":"W2","path":"w2.txt"}' },
        ],
      },
      { text: 'Wrote one, the other was refused.' },
    );
    const { stream, turnId } = await startStreamingTurn(runtime.baseUrl, {
      agent: { id: 'mixed', tools: { computer: true }, approvals: { destructive: 'ask' } },
      input: 'read both, write both',
    });
    const record = await waitForPending(runtime.baseUrl, turnId, 2);
    expect(record.pendingApprovals.map((pending: { callId: string }) => pending.callId)).toEqual(['call_w1', 'call_w2']);
    // The reads ran before the turn parked; the writes did not.
    const parkedTypes = eventsOf(stream).map((event) => `${event['type'] as string}:${(event['callId'] as string | undefined) ?? ''}`);
    // Parallel reads finish in any order; the outputs sent back are checked in call order below.
    expect(parkedTypes.filter((entry) => entry.startsWith('tool.completed')).sort()).toEqual(['tool.completed:call_r1', 'tool.completed:call_r2']);
    expect(parkedTypes.slice(-2)).toEqual(['tool.approval_requested:call_w1', 'tool.approval_requested:call_w2']);
    expect(provider.requests.length - before).toBe(1);

    const [w1, w2] = record.pendingApprovals;
    const first = await decide(runtime.baseUrl, turnId, w1.callId, { decision: 'approve', argumentsHash: w1.argumentsHash });
    expect(first).toMatchObject({ status: 202, body: { turnStatus: 'requires_action' } });
    // One decided, one still pending: the turn still waits, nothing ran, no model request.
    const between = await waitForPending(runtime.baseUrl, turnId, 1);
    expect(between.pendingApprovals[0].callId).toBe('call_w2');
    await expect(stat(path.join(home, 'w1.txt'))).rejects.toThrow();
    expect(provider.requests.length - before).toBe(1);

    const second = await decide(runtime.baseUrl, turnId, w2.callId, { decision: 'deny', message: 'w2 is not needed', argumentsHash: w2.argumentsHash });
    expect(second).toMatchObject({ status: 202, body: { turnStatus: 'running' } });
    await stream.ended;
    const events = eventsOf(stream);
    expectContiguousSeqs(events);
    expect(events.at(-1)).toMatchObject({ type: 'turn.completed', output: 'Wrote one, the other was refused.' });
    expect(await readFile(path.join(home, 'w1.txt'), 'utf8')).toBe('W1');
    await expect(stat(path.join(home, 'w2.txt'))).rejects.toThrow();

    const next = provider.requests[before + 1];
    const input = next?.body.input as { type: string; call_id?: string; output?: string }[];
    const outputs = input.filter((item) => item.type === 'function_call_output');
    expect(outputs.map((item) => item.call_id)).toEqual(['call_r1', 'call_w1', 'call_r2', 'call_w2']);
    expect(outputs[0]?.output).toContain('one');
    expect(outputs[1]?.output).toContain('w1.txt');
    expect(outputs[3]?.output).toMatch(/denied.*w2 is not needed/s);
    // The calls themselves went back exactly as the model made them.
    expect(input.filter((item) => item.type === 'function_call').map((item) => item.call_id)).toEqual(['call_r1', 'call_w1', 'call_r2', 'call_w2']);
  });
});
