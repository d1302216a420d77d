import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream } from '../support/sse-client.js';
import { startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { parseMetrics, runJsonTurn, sampleValue, waitForTurnStatus } from '../support/turn-waits.js';

const token = 'metrics-test-token-0123456789';

describe('GET /metrics', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime({ env: { API_TOKEN: token } });
  });
  afterAll(async () => {
    await runtime.close();
  });
  const metrics = async () => {
    const response = await fetch(`${runtime.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(await response.text());
  };

  it('is behind the API token', async () => {
    expect((await fetch(`${runtime.baseUrl}/metrics`)).status).toBe(401);
    expect((await fetch(`${runtime.baseUrl}/metrics`, { headers: { authorization: 'Bearer wrong-token-wrong-token' } })).status).toBe(403);
  });

  it('counts turns by kind and outcome, tools by name and outcome, repairs by rung, and model calls', async () => {
    const before = await metrics();
    const turn = await runJsonTurn(
      { baseUrl: runtime.baseUrl, token },
      {
        agent: { id: 'metrics-agent', tools: { computer: true } },
        input: 'go',
        model: {
          script: [
            { calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }] },
            {
              calls: [
                { name: 'read_file', arguments: '{"path": "a.txt"' },
                { name: 'read_file', arguments: { path: 'missing.txt' } },
                { name: 'no_such_tool_from_the_model', arguments: {} },
              ],
            },
            { text: 'done' },
          ],
        },
      },
    );
    expect(turn.status).toBe(200);
    expect(turn.json.status).toBe('completed');
    const after = await metrics();
    const delta = (name: string, labels: Record<string, string>) => sampleValue(after, name, labels) - sampleValue(before, name, labels);

    expect(delta('turn_runtime_turns_total', { kind: 'text', status: 'completed', outcome: 'final_answer' })).toBe(1);
    expect(delta('turn_runtime_tool_duration_seconds_count', { tool: 'write_file', outcome: 'completed' })).toBe(1);
    expect(delta('turn_runtime_tool_duration_seconds_count', { tool: 'read_file', outcome: 'completed' })).toBe(1);
    expect(delta('turn_runtime_tool_duration_seconds_count', { tool: 'read_file', outcome: 'tool_error' })).toBe(1);
    // A name the model made up is not a label value: labels stay a bounded set.
    expect(delta('turn_runtime_tool_duration_seconds_count', { tool: 'unknown', outcome: 'unknown_tool' })).toBe(1);
    expect(after.some((sample) => Object.values(sample.labels).includes('no_such_tool_from_the_model'))).toBe(false);
    expect(after.some((sample) => Object.values(sample.labels).includes('metrics-agent'))).toBe(false);
    expect(delta('turn_runtime_argument_repairs_total', { rung: 'closed_containers' })).toBe(1);
    expect(delta('turn_runtime_model_call_duration_seconds_count', { provider: 'turn_runtime.scripted', outcome: 'ok' })).toBe(3);
    expect(sampleValue(after, 'turn_runtime_turns_in_flight', { kind: 'text' })).toBe(0);
    // Default process metrics are there too.
    expect(after.some((sample) => sample.name === 'process_cpu_seconds_total')).toBe(true);
    expect(after.some((sample) => sample.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('shows a running turn in flight, and times the abort after a client disconnects', async () => {
    const before = await metrics();
    const stream = await openStream({
      url: `${runtime.baseUrl}/turns`,
      headers: { authorization: `Bearer ${token}` },
      body: { agent: { id: 'metrics-disconnect' }, input: 'think', model: { script: [{ text: 'late', delayMs: 30_000 }] } },
    });
    const turnId = String(stream.response.headers['turn-id']);
    await stream.waitFor((message) => message.event === 'turn.started');
    expect(sampleValue(await metrics(), 'turn_runtime_turns_in_flight', { kind: 'text' })).toBe(1);
    stream.destroy();
    await waitForTurnStatus({ baseUrl: runtime.baseUrl, token }, turnId, 'cancelled');
    const after = await metrics();
    expect(sampleValue(after, 'turn_runtime_turns_in_flight', { kind: 'text' })).toBe(0);
    expect(sampleValue(after, 'turn_runtime_disconnect_to_abort_seconds_count') - sampleValue(before, 'turn_runtime_disconnect_to_abort_seconds_count')).toBe(1);
    expect(
      sampleValue(after, 'turn_runtime_turns_total', { kind: 'text', status: 'cancelled', outcome: 'client_disconnected' }) -
        sampleValue(before, 'turn_runtime_turns_total', { kind: 'text', status: 'cancelled', outcome: 'client_disconnected' }),
    ).toBe(1);
    expect(
      sampleValue(after, 'turn_runtime_model_call_duration_seconds_count', { provider: 'turn_runtime.scripted', outcome: 'cancelled' }) -
        sampleValue(before, 'turn_runtime_model_call_duration_seconds_count', { provider: 'turn_runtime.scripted', outcome: 'cancelled' }),
    ).toBe(1);
  });
});

describe('GET /metrics with METRICS_PUBLIC=true', () => {
  it('is served without the token while the API still wants it', async () => {
    const runtime = await startTestRuntime({ env: { API_TOKEN: token, METRICS_PUBLIC: 'true' } });
    try {
      expect((await fetch(`${runtime.baseUrl}/metrics`)).status).toBe(200);
      expect((await fetch(`${runtime.baseUrl}/turns/turn_x`)).status).toBe(401);
    } finally {
      await runtime.close();
    }
  });
});
