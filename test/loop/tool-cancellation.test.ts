import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { dispatchToolCalls } from '../../src/loop/dispatch-tool-calls.js';
import { createToolMap } from '../../src/tools/tool-map.js';
import { CallTimedOutError, type StoppedOutcome } from '../../src/tools/call-stopped.js';
import { STOP_REPORT_MS } from '../../src/loop/execute-tool-call.js';
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
    expect(eventsOf(events, 'tool.failed').map((event) => [event.callId, event.error.code, event.output, event.outcome])).toEqual([
      // The turn was cancelled while this call ran, so it is recorded as aborted too; it is read-only, so nothing it did stays.
      ['call_1_1', 'aborted', expect.stringMatching(/^aborted after [\d.]+ m?s: the turn was cancelled$/) as unknown, 'cancelled'],
      ['call_1_2', 'aborted', 'Not run: the turn was cancelled before this call started.', 'not_started'],
      ['call_1_3', 'aborted', 'Not run: the turn was cancelled before this call started.', 'not_started'],
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

describe('the outcome of a stopped call', () => {
  /** A turn whose one call is cancelled 20 ms after it started; the tool does `onStop` when its signal fires. */
  async function cancelledCall(options: { isReadOnly: boolean; reportsStop?: boolean; onStop?: (report: (outcome: StoppedOutcome) => void) => void; ignoresSignal?: boolean }) {
    const controller = new AbortController();
    const subject = tool({
      name: 'subject',
      isReadOnly: options.isReadOnly,
      isDestructive: !options.isReadOnly,
      ...(options.reportsStop === undefined ? {} : { reportsStop: options.reportsStop }),
      execute: async (_params, context) => {
        // Said before the stop: not an outcome, and ignored.
        context.reportStopped('cancelled');
        context.signal.addEventListener('abort', () => {
          options.onStop?.(context.reportStopped);
        });
        setTimeout(() => {
          controller.abort(new Error('turn cancelled: client_disconnected'));
        }, 20);
        await sleep(2_000, undefined, options.ignoresSignal === true ? { ref: false } : { signal: context.signal });
        return { content: 'late' };
      },
    });
    const started = performance.now();
    const { outcome, events } = await runLoop({ tools: [subject], signal: controller.signal, script: [{ calls: [{ name: 'subject', arguments: { id: 'x' } }] }] });
    expect(outcome.kind).toBe('cancelled');
    const [failed] = eventsOf(events, 'tool.failed');
    return { failed, tookMs: performance.now() - started };
  }

  it('is what a tool that reports its stop says, once it says it', async () => {
    const { failed, tookMs } = await cancelledCall({
      isReadOnly: false,
      reportsStop: true,
      ignoresSignal: true,
      onStop: (report) => {
        setTimeout(() => {
          report('cancelled');
          report('not_started'); // the first report stands
        }, 60);
      },
    });
    expect(failed).toMatchObject({ error: { code: 'aborted' }, outcome: 'cancelled' });
    // Recorded after the report, not at the abort.
    expect(failed?.durationMs).toBeGreaterThanOrEqual(70);
    expect(tookMs).toBeLessThan(STOP_REPORT_MS);
  });

  it('says the call never began when the tool reports not_started', async () => {
    const { failed } = await cancelledCall({ isReadOnly: false, reportsStop: true, onStop: (report) => { report('not_started'); } });
    expect(failed).toMatchObject({ error: { code: 'aborted', message: 'Not run: the turn was cancelled before this call started.' }, outcome: 'not_started' });
  });

  it('is maybe_ran when a tool that reports its stop stays silent, after at most STOP_REPORT_MS', async () => {
    const { failed, tookMs } = await cancelledCall({ isReadOnly: false, reportsStop: true, ignoresSignal: true });
    expect(failed).toMatchObject({ outcome: 'maybe_ran' });
    expect(tookMs).toBeGreaterThanOrEqual(STOP_REPORT_MS);
    expect(tookMs).toBeLessThan(2_000);
  });

  it('is recorded at once for a tool that cannot report: maybe_ran when it may change things, cancelled when read-only', async () => {
    const changing = await cancelledCall({ isReadOnly: false, ignoresSignal: true });
    expect(changing.failed).toMatchObject({ error: { code: 'aborted' }, outcome: 'maybe_ran' });
    expect(changing.tookMs).toBeLessThan(STOP_REPORT_MS);
    const reading = await cancelledCall({ isReadOnly: true, ignoresSignal: true });
    expect(reading.failed).toMatchObject({ error: { code: 'aborted' }, outcome: 'cancelled' });
    expect(reading.tookMs).toBeLessThan(STOP_REPORT_MS);
  });

  it('is set on timeouts too: the loop’s, and a tool’s own (CallTimedOutError, recorded as a timeout)', async () => {
    const state = { finished: false, signalFired: false };
    const stubborn = { ...stubbornTool({ name: 'stubborn', timeoutMs: 40, state }), isReadOnly: false };
    const ownLimit = tool({
      name: 'own_limit',
      isReadOnly: false,
      isDestructive: true,
      execute: () => Promise.reject(new CallTimedOutError('the command timed out after 3 s and was killed', 'cancelled')),
    });
    const { events } = await runLoop({
      tools: [stubborn, ownLimit],
      script: [{ calls: [{ name: 'stubborn', arguments: { id: 's' } }, { name: 'own_limit', arguments: { id: 'o' } }] }, { text: 'done' }],
    });
    expect(eventsOf(events, 'tool.failed').map((event) => [event.name, event.error.code, event.outcome])).toEqual([
      ['stubborn', 'timeout', 'maybe_ran'],
      ['own_limit', 'timeout', 'cancelled'],
    ]);
    expect(eventsOf(events, 'tool.failed')[1]?.error.message).toBe('the command timed out after 3 s and was killed');
  });

  it('is absent from failures that no cancel or timeout caused', async () => {
    const broken = tool({ name: 'broken', execute: () => Promise.reject(new Error('disk full')) });
    const { events } = await runLoop({ tools: [broken], script: [{ calls: [{ name: 'broken', arguments: { id: 'b' } }, { name: 'nope', arguments: {} }] }, { text: 'done' }] });
    expect(eventsOf(events, 'tool.failed').map((event) => [event.error.code, event.outcome])).toEqual([
      ['tool_error', undefined],
      ['unknown_tool', undefined],
    ]);
  });
});
