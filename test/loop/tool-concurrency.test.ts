import { describe, expect, it } from 'vitest';
import { callOutputs, runLoop, Timeline, timedTool } from './loop-harness.js';

const call = (name: string, id: string) => ({ name, arguments: { id } });

describe('the loop runs parallel and sequential calls', () => {
  it('runs parallel calls at the same time and answers them in the model’s call order', async () => {
    const timeline = new Timeline();
    const read = timedTool({ name: 'read', mode: 'parallel', timeline, waitMs: (id) => (id === 'slow' ? 80 : 20) });
    const { requests, outcome } = await runLoop({
      tools: [read],
      script: [{ calls: [call('read', 'slow'), call('read', 'fast')] }, { text: 'done' }],
    });
    expect(outcome).toMatchObject({ kind: 'answered', text: 'done' });
    expect(timeline.at('start:fast')).toBeLessThan(timeline.at('end:slow'));
    expect(timeline.at('end:fast')).toBeLessThan(timeline.at('end:slow'));
    expect(callOutputs(requests[1])).toEqual([
      { type: 'function_call_output', call_id: 'call_1_1', output: 'done slow' },
      { type: 'function_call_output', call_id: 'call_1_2', output: 'done fast' },
    ]);
  });

  it('never runs more parallel calls at once than the limit', async () => {
    const timeline = new Timeline();
    const read = timedTool({ name: 'read', mode: 'parallel', timeline, waitMs: () => 30 });
    const { requests } = await runLoop({
      tools: [read],
      parallelLimit: 2,
      script: [{ calls: ['a', 'b', 'c', 'd'].map((id) => call('read', id)) }],
    });
    expect(timeline.maxActive).toBe(2);
    expect(timeline.entries.filter((entry) => entry.startsWith('end:'))).toHaveLength(4);
    expect(callOutputs(requests[1]).map((item) => item.output)).toEqual(['done a', 'done b', 'done c', 'done d']);
  });

  it('never overlaps sequential calls, and runs them in call order', async () => {
    const timeline = new Timeline();
    const write = timedTool({ name: 'write', mode: 'sequential', timeline, waitMs: (id) => (id === 'a' ? 40 : 10) });
    await runLoop({ tools: [write], script: [{ calls: ['a', 'b', 'c'].map((id) => call('write', id)) }] });
    expect(timeline.maxActive).toBe(1);
    expect(timeline.entries).toEqual(['start:a', 'end:a', 'start:b', 'end:b', 'start:c', 'end:c']);
  });

  it('runs a sequential call after the parallel calls before it end, and before the ones after it start', async () => {
    const timeline = new Timeline();
    const read = timedTool({ name: 'read', mode: 'parallel', timeline, waitMs: () => 30 });
    const write = timedTool({ name: 'write', mode: 'sequential', timeline, waitMs: () => 20 });
    const { requests } = await runLoop({
      tools: [read, write],
      script: [{ calls: [call('read', 'p1'), call('read', 'p2'), call('write', 's'), call('read', 'p3')] }],
    });
    expect(timeline.at('start:p2')).toBeLessThan(timeline.at('end:p1'));
    expect(timeline.at('start:s')).toBeGreaterThan(timeline.at('end:p1'));
    expect(timeline.at('start:s')).toBeGreaterThan(timeline.at('end:p2'));
    expect(timeline.at('end:s')).toBeLessThan(timeline.at('start:p3'));
    expect(callOutputs(requests[1]).map((item) => item.call_id)).toEqual(['call_1_1', 'call_1_2', 'call_1_3', 'call_1_4']);
  });

  it('lets a rejected call sit in a parallel group without breaking it up', async () => {
    const timeline = new Timeline();
    const read = timedTool({ name: 'read', mode: 'parallel', timeline, waitMs: () => 30 });
    const { requests } = await runLoop({
      tools: [read],
      script: [{ calls: [call('read', 'a'), call('missing', 'x'), call('read', 'b')] }],
    });
    expect(timeline.at('start:b')).toBeLessThan(timeline.at('end:a'));
    expect(callOutputs(requests[1]).map((item) => item.output)).toEqual([
      'done a',
      expect.stringMatching(/^Error: there is no tool named "missing"/) as unknown,
      'done b',
    ]);
  });
});
