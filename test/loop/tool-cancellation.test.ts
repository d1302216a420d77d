import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { dispatchToolCalls } from '../../src/loop/dispatch-tool-calls.js';
import { createToolMap } from '../../src/tools/tool-map.js';
import type { ModelClient } from '../../src/models/model-client.js';
import type { TurnEventBody } from '../../src/events/turn-events.js';
import { eventsOf, outputOf, runLoop, Timeline, timedTool, tool, toolCallRuntime } from './loop-harness.js';

/** A tool that never looks at its signal: it keeps "working" for two seconds (unref'd). */
function stubbornTool(options: { name: string; timeoutMs?: number; onStart?: (signal: AbortSignal) => void; state: { finished: boolean; signalFired: boolean } }) {
  return tool({
    name: options.name,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    execute: async (_params, context) => {
      context.signal.addEventListener('abort', () => {
        options.state.signalFired = true;
      });
      options.onStart?.(context.signal);
      await sleep(2_000, undefined, { ref: false });
      options.state.finished = true;
      return { content: 'finished late' };
    },
  });
}

describe('per-tool timeout', () => {
  it('stops a tool that ignores its signal, records timeout, and moves on', async () => {
    const state = { finished: false, signalFired: false };
    const stubborn = stubbornTool({ name: 'stubborn', timeoutMs: 50, state });
    const { outcome, events, requests } = await runLoop({
      tools: [stubborn],
      script: [{ calls: [{ name: 'stubborn', arguments: { id: 'x' } }] }, { text: 'It timed out; I will stop here.' }],
    });
    expect(outcome).toMatchObject({ kind: 'answered', text: 'It timed out; I will stop here.' });
    expect(state).toEqual({ finished: false, signalFired: true });
    const failed = eventsOf(events, 'tool.failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.error).toEqual({
      code: 'timeout',
      message: expect.stringMatching(/^stubborn timed out after [\d.]+ m?s and was stopped; try a smaller request or a different approach$/) as unknown,
    });
    expect(outputOf(requests[1], 'call_1_1')).toMatch(/^Error: stubborn timed out after [\d.]+ m?s and was stopped/);
    expect(eventsOf(events, 'tool.completed')).toHaveLength(0);
  });

  it('uses the turn’s default timeout for a tool without its own, and tells the tool why', async () => {
    let reason: unknown;
    const waiting = tool({
      name: 'waiting',
      execute: async (_params, context) => {
        try {
          await sleep(2_000, undefined, { signal: context.signal });
        } finally {
          reason = context.signal.reason;
        }
        return { content: 'never' };
      },
    });
    const { events } = await runLoop({ tools: [waiting], toolTimeoutMs: 40, script: [{ calls: [{ name: 'waiting', arguments: { id: 'x' } }] }] });
    expect(eventsOf(events, 'tool.failed')[0]?.error.code).toBe('timeout');
    expect(reason).toBeInstanceOf(Error);
    expect((reason as Error).message).toMatch(/^timed out after [\d.]+ m?s$/);
  });

  it('lets the other calls of a parallel group finish when one times out', async () => {
    const timeline = new Timeline();
    const quick = timedTool({ name: 'quick', mode: 'parallel', timeline, waitMs: () => 10 });
    const slow = timedTool({ name: 'slow', mode: 'parallel', timeline, waitMs: () => 2_000 });
    const slowWithTimeout = { ...slow, timeoutMs: 40 };
    const { requests } = await runLoop({
      tools: [quick, slowWithTimeout],
      script: [{ calls: [{ name: 'slow', arguments: { id: 's' } }, { name: 'quick', arguments: { id: 'q' } }] }],
    });
    expect(outputOf(requests[1], 'call_1_1')).toMatch(/^Error: slow timed out/);
    expect(outputOf(requests[1], 'call_1_2')).toBe('done q');
  });
});

describe('cancelling the turn', () => {
  it('fires the tool’s signal and ends promptly as cancelled, even when the tool ignores it', async () => {
    const controller = new AbortController();
    const state = { finished: false, signalFired: false };
    const stubborn = stubbornTool({
      name: 'stubborn',
      state,
      onStart: () => {
        setTimeout(() => {
          controller.abort(new Error('turn cancelled: cancel_requested'));
        }, 20);
      },
    });
    const { outcome, events, requests } = await runLoop({
      tools: [stubborn],
      signal: controller.signal,
      script: [{ calls: [{ name: 'stubborn', arguments: { id: 'x' } }] }, { text: 'never asked' }],
    });
    expect(outcome.kind).toBe('cancelled');
    expect(state).toEqual({ finished: false, signalFired: true });
    expect(requests).toHaveLength(1);
    const failed = eventsOf(events, 'tool.failed');
    expect(failed.map((event) => event.error.code)).toEqual(['aborted']);
    expect(failed[0]?.output).toMatch(/^aborted after [\d.]+ m?s: the turn was cancelled$/);
    expect(failed[0]?.error.message).toBe(failed[0]?.output);
  });

  it('records a cooperative tool that stops on its signal as aborted, not as an error', async () => {
    const controller = new AbortController();
    const polite = tool({
      name: 'polite',
      execute: async (_params, context) => {
        setTimeout(() => {
          controller.abort();
        }, 20);
        await sleep(2_000, undefined, { signal: context.signal });
        return { content: 'never' };
      },
    });
    const { outcome, events } = await runLoop({ tools: [polite], signal: controller.signal, script: [{ calls: [{ name: 'polite', arguments: { id: 'x' } }] }] });
    expect(outcome.kind).toBe('cancelled');
    expect(eventsOf(events, 'tool.failed').map((event) => event.error.code)).toEqual(['aborted']);
  });

  it('does not start the queued calls of a group once the turn is cancelled', async () => {
    const controller = new AbortController();
    const timeline = new Timeline();
    const read = timedTool({ name: 'read', mode: 'parallel', timeline, waitMs: () => 30 });
    const canceller = tool({
      name: 'cancel_me',
      executionMode: 'parallel',
      execute: () => {
        controller.abort();
        return Promise.resolve({ content: 'cancelled the turn' });
      },
    });
    const { events, outcome } = await runLoop({
      tools: [read, canceller],
      parallelLimit: 1,
      signal: controller.signal,
      script: [{ calls: [{ name: 'cancel_me', arguments: { id: 'c' } }, { name: 'read', arguments: { id: 'a' } }, { name: 'read', arguments: { id: 'b' } }] }],
    });
    expect(outcome.kind).toBe('cancelled');
    expect(timeline.entries).toEqual([]);
    expect(eventsOf(events, 'tool.failed').map((event) => [event.callId, event.error.code, event.output])).toEqual([
      // The turn was cancelled while this call ran, so it is recorded as aborted too.
      ['call_1_1', 'aborted', expect.stringMatching(/^aborted after [\d.]+ m?s: the turn was cancelled$/) as unknown],
      ['call_1_2', 'aborted', 'Not run: the turn was cancelled before this call started.'],
      ['call_1_3', 'aborted', 'Not run: the turn was cancelled before this call started.'],
    ]);
  });

  it('starts no tool when the turn is cancelled between the model’s answer and dispatch', async () => {
    const controller = new AbortController();
    let ran = false;
    const guarded = tool({
      name: 'guarded',
      execute: () => {
        ran = true;
        return Promise.resolve({ content: 'ran' });
      },
    });
    const model: ModelClient = {
      model: 'cancelling',
      respond: () => {
        controller.abort();
        return Promise.resolve({
          text: '',
          calls: [{ callId: 'c1', name: 'guarded', arguments: '{"id":"x"}' }],
          outputItems: [{ type: 'function_call', call_id: 'c1', name: 'guarded', arguments: '{"id":"x"}' }],
          usage: { inputTokens: 3, outputTokens: 2 },
        });
      },
    };
    const { outcome, events } = await runLoop({ tools: [guarded], model, signal: controller.signal });
    expect(outcome).toEqual({ kind: 'cancelled', iterations: 1, usage: { inputTokens: 3, outputTokens: 2 } });
    expect(ran).toBe(false);
    expect(eventsOf(events, 'tool.started')).toHaveLength(0);
  });

  it('answers every call without running any when dispatch is handed a cancelled signal', async () => {
    const controller = new AbortController();
    controller.abort();
    let ran = 0;
    const guarded = tool({
      name: 'guarded',
      execute: () => {
        ran += 1;
        return Promise.resolve({ content: 'ran' });
      },
    });
    const events: TurnEventBody[] = [];
    const result = await dispatchToolCalls({
      calls: [
        { callId: 'a', name: 'guarded', arguments: '{"id":"1"}' },
        { callId: 'b', name: 'guarded', arguments: '{"id":"2"}' },
      ],
      toolMap: createToolMap([guarded]),
      parallelLimit: 4,
      runtime: toolCallRuntime({ signal: controller.signal, events }),
    });
    expect(ran).toBe(0);
    expect(result.outputs).toEqual([
      { type: 'function_call_output', call_id: 'a', output: 'Not run: the turn was cancelled before this call started.' },
      { type: 'function_call_output', call_id: 'b', output: 'Not run: the turn was cancelled before this call started.' },
    ]);
    expect(events.map((event) => event.type)).toEqual(['tool.failed', 'tool.failed']);
    expect(result.terminatedBy).toBeUndefined();
  });

  it('ends as cancelled when the turn is cancelled while the model is answering', async () => {
    const controller = new AbortController();
    setTimeout(() => {
      controller.abort();
    }, 20);
    const { outcome, requests } = await runLoop({ tools: [], signal: controller.signal, script: [{ text: 'slow', delayMs: 5_000 }] });
    expect(outcome.kind).toBe('cancelled');
    expect(requests).toHaveLength(1);
  });

  it('does not call the model at all when the turn was cancelled before it began', async () => {
    const controller = new AbortController();
    controller.abort();
    const { outcome, requests } = await runLoop({ tools: [], signal: controller.signal, script: [{ text: 'hi' }] });
    expect(outcome).toMatchObject({ kind: 'cancelled', iterations: 0 });
    expect(requests).toHaveLength(0);
  });
});
