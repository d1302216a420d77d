import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { parseMetrics, runJsonTurn, sampleValue } from '../support/turn-waits.js';

/** The trimmer as the service process runs it (src/server.ts), seen through GET /metrics. */
describe('the service process gives malloc\'s free memory back', () => {
  let service: ServiceProcess;
  beforeAll(async () => {
    service = await startServiceProcess({
      instanceId: 'native-heap-trim',
      env: { NATIVE_HEAP_TRIM_MS: '50', METRICS_PUBLIC: 'true', BODY_LIMIT_BYTES: String(4 * 1024 * 1024) },
    });
  });
  afterAll(async () => {
    await service.stop();
  });
  const metrics = async () => parseMetrics(await (await fetch(`${service.baseUrl}/metrics`)).text());

  it('reports what malloc holds free, and trims after a turn has grown the process', async () => {
    const before = await metrics();
    expect(sampleValue(before, 'turn_runtime_native_heap_free_bytes')).toBeGreaterThan(0);
    const trimsBefore = sampleValue(before, 'turn_runtime_native_heap_trims_total');
    // Eight turns at once, each answering with 1 MB of text (the most a script step holds): their
    // request bodies, the streamed deltas, the stored events.
    const turns = await Promise.all(
      Array.from({ length: 8 }, (_, index) => runJsonTurn({ baseUrl: service.baseUrl }, { agent: { id: `big-answer-${index}` }, input: 'go', model: { script: [{ text: 'x'.repeat(1_000_000) }] } })),
    );
    expect(turns.map((turn) => turn.status)).toEqual(Array.from({ length: 8 }, () => 200));
    let after = await metrics();
    for (let waited = 0; sampleValue(after, 'turn_runtime_native_heap_trims_total') === trimsBefore && waited < 5_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      after = await metrics();
    }
    expect(sampleValue(after, 'turn_runtime_native_heap_trims_total')).toBeGreaterThan(trimsBefore);
    expect(sampleValue(after, 'turn_runtime_native_heap_released_bytes_total')).toBeGreaterThanOrEqual(sampleValue(before, 'turn_runtime_native_heap_released_bytes_total'));
  });
});
