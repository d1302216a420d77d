import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { systemClock } from '../../src/clock.js';
import { createTextCompletionPolicy } from '../../src/loop/completion-policy.js';
import { runTurnLoop } from '../../src/loop/run-turn-loop.js';
import type { ProviderToolList, ToolCatalog } from '../../src/tools/tool-catalog.js';
import { createToolMap } from '../../src/tools/tool-map.js';
import type { ModelClient, ModelResponse } from '../../src/models/model-client.js';
import { createScriptedModel } from '../../src/models/scripted-model.js';
import { eventsOf, recordingModel, runLoop, tool } from './loop-harness.js';

const echo = tool({ name: 'echo', execute: (params) => Promise.resolve({ content: `echo ${params.id}` }) });

/** A model that calls echo until `rounds` is reached, reporting usage each time. */
function usageModel(rounds: number): ModelClient {
  let call = 0;
  return {
    model: 'metered',
    respond: (): Promise<ModelResponse> => {
      call += 1;
      const calls = call <= rounds ? [{ callId: `c${call}`, name: 'echo', arguments: `{"id":"${call}"}` }] : [];
      return Promise.resolve({ text: call > rounds ? 'done' : '', calls, outputItems: [], usage: { inputTokens: 100 * call, outputTokens: call } });
    },
  };
}

describe('what the loop reports as it runs', () => {
  it('adds up usage over every model call', async () => {
    const { outcome } = await runLoop({ tools: [echo], model: usageModel(2) });
    expect(outcome).toEqual({ kind: 'answered', text: 'done', iterations: 3, usage: { inputTokens: 600, outputTokens: 6 } });
  });

  it('keeps a caller’s progress object current while the turn runs', async () => {
    const progress = { iterations: 0, usage: { inputTokens: 0, outputTokens: 0 } };
    const seen: { iterations: number; inputTokens: number }[] = [];
    const watcher = tool({
      name: 'echo',
      execute: () => {
        seen.push({ iterations: progress.iterations, inputTokens: progress.usage.inputTokens });
        return Promise.resolve({ content: 'ok' });
      },
    });
    await runTurnLoop({
      model: usageModel(2),
      input: [],
      catalog: { assembled: [watcher], callable: () => createToolMap([watcher]), providerTools: () => ({ tools: [], json: '[]', version: 1 }) },
      completion: createTextCompletionPolicy(),
      maxIterations: 5,
      toolTimeoutMs: 1_000,
      parallelLimit: 2,
      signal: new AbortController().signal,
      emit: () => undefined,
      logger: pino({ level: 'silent' }),
      clock: systemClock,
      progress,
    });
    expect(seen).toEqual([
      { iterations: 1, inputTokens: 100 },
      { iterations: 2, inputTokens: 300 },
    ]);
    expect(progress).toEqual({ iterations: 3, usage: { inputTokens: 600, outputTokens: 6 } });
  });

  it('streams the text as deltas tagged with their iteration, then the whole message', async () => {
    const long = 'This answer is long enough to arrive in several pieces from the model.';
    const { events } = await runLoop({ tools: [echo], script: [{ text: 'Checking.', calls: [{ name: 'echo', arguments: { id: 'a' } }] }, { text: long }] });
    const deltas = eventsOf(events, 'message.delta');
    expect(deltas.filter((event) => event.iteration === 1).map((event) => event.delta).join('')).toBe('Checking.');
    expect(deltas.filter((event) => event.iteration === 2).map((event) => event.delta).join('')).toBe(long);
    expect(deltas.filter((event) => event.iteration === 2).length).toBeGreaterThan(1);
    expect(eventsOf(events, 'message.completed')).toEqual([
      { type: 'message.completed', iteration: 1, text: 'Checking.' },
      { type: 'message.completed', iteration: 2, text: long },
    ]);
  });

  it('sends each request the catalog’s current tools and reports the iterations where they changed', async () => {
    const small: ProviderToolList = { tools: [{ type: 'function', name: 'load' }], json: '[1]', version: 1 };
    const grown: ProviderToolList = { tools: [{ type: 'function', name: 'load' }, { type: 'function', name: 'more' }], json: '[2]', version: 2 };
    let loaded = false;
    // Like Tool Search: running `load` makes more tools visible from the next request on.
    const load = tool({
      name: 'load',
      execute: () => {
        loaded = true;
        return Promise.resolve({ content: 'loaded' });
      },
    });
    const catalog: ToolCatalog = { assembled: [load], callable: () => createToolMap([load]), providerTools: () => (loaded ? grown : small) };
    const recorded = recordingModel(
      createScriptedModel({
        script: [{ calls: [{ name: 'load', arguments: { id: 'a' } }] }, { calls: [{ name: 'load', arguments: { id: 'b' } }] }, { text: 'done' }],
      }),
    );
    const changes: [number, number][] = [];
    await runTurnLoop({
      model: recorded.model,
      input: [],
      catalog,
      onProviderToolsChanged: (iteration, list) => changes.push([iteration, list.version]),
      completion: createTextCompletionPolicy(),
      maxIterations: 5,
      toolTimeoutMs: 1_000,
      parallelLimit: 2,
      signal: new AbortController().signal,
      emit: () => undefined,
      logger: pino({ level: 'silent' }),
      clock: systemClock,
    });
    expect(recorded.requests.map((request) => request.tools.length)).toEqual([1, 2, 2]);
    expect(changes).toEqual([[2, 2]]);
  });
});
