import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EMPTY_ANSWER_NUDGE, type CompletionPolicy } from '../../src/loop/completion-policy.js';
import { createStaticToolCatalog } from '../../src/tools/tool-catalog.js';
import { DuplicateToolError } from '../../src/tools/tool-map.js';
import type { ModelClient, ModelResponse } from '../../src/models/model-client.js';
import { ModelError } from '../../src/models/model-client.js';
import { createScriptedModel } from '../../src/models/scripted-model.js';
import { callOutputs, eventsOf, outputOf, runLoop, Timeline, timedTool, tool } from './loop-harness.js';

const echo = tool({ name: 'echo', execute: (params) => Promise.resolve({ content: `echo ${params.id}` }) });

describe('runTurnLoop: how a turn ends', () => {
  it('answers when the model calls no tool, after feeding tool outputs back', async () => {
    const { outcome, requests, events } = await runLoop({
      tools: [echo],
      script: [{ text: 'Let me check.', calls: [{ name: 'echo', arguments: { id: 'a' } }] }, { text: 'All done.' }],
    });
    expect(outcome).toEqual({ kind: 'answered', text: 'All done.', iterations: 2, usage: { inputTokens: 0, outputTokens: 0 } });
    expect(requests).toHaveLength(2);
    expect(requests[1]?.input.slice(1)).toEqual([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me check.' }] },
      { type: 'function_call', call_id: 'call_1_1', name: 'echo', arguments: '{"id":"a"}' },
      { type: 'function_call_output', call_id: 'call_1_1', output: 'echo a' },
    ]);
    expect(eventsOf(events, 'message.completed').map((event) => event.text)).toEqual(['Let me check.', 'All done.']);
    expect(requests[0]?.tools).toEqual([expect.objectContaining({ type: 'function', name: 'echo' })]);
  });

  it('ends after the round in which a tool terminates, answering later calls without running them', async () => {
    let echoes = 0;
    const counting = tool({
      name: 'echo',
      execute: () => {
        echoes += 1;
        return Promise.resolve({ content: 'echo' });
      },
    });
    const finish = tool({ name: 'finish', isReadOnly: false, execute: () => Promise.resolve({ content: 'Finished.', terminate: true }) });
    const { outcome, requests, events } = await runLoop({
      tools: [counting, finish],
      script: [
        {
          text: 'Wrapping up.',
          calls: [
            { name: 'echo', arguments: { id: 'before' } },
            { name: 'finish', arguments: { id: 'x' } },
            { name: 'echo', arguments: { id: 'after' } },
            { name: 'echo', arguments: { id: 'after-2' } },
          ],
        },
        { text: 'never asked' },
      ],
    });
    expect(outcome).toMatchObject({ kind: 'terminated', text: 'Wrapping up.', call: { name: 'finish', callId: 'call_1_2' }, result: { content: 'Finished.' } });
    expect(requests).toHaveLength(1);
    expect(echoes).toBe(1);
    const skipped = eventsOf(events, 'tool.failed');
    expect(skipped.map((event) => [event.callId, event.error.code, event.output])).toEqual([
      ['call_1_3', 'skipped', 'Not run: a prior tool call already ended this turn.'],
      ['call_1_4', 'skipped', 'Not run: a prior tool call already ended this turn.'],
    ]);
    expect(eventsOf(events, 'tool.started').map((event) => event.callId)).toEqual(['call_1_1', 'call_1_2']);
  });

  it('does not start a later parallel call once an earlier one has ended the turn', async () => {
    const timeline = new Timeline();
    const stop = timedTool({
      name: 'stop_check',
      mode: 'parallel',
      timeline,
      waitMs: () => 10,
      result: (id) => ({ content: `checked ${id}`, terminate: id === 'first' }),
    });
    const { outcome, events } = await runLoop({
      tools: [stop],
      parallelLimit: 1,
      script: [{ calls: ['first', 'second', 'third'].map((id) => ({ name: 'stop_check', arguments: { id } })) }],
    });
    expect(outcome).toMatchObject({ kind: 'terminated', call: { callId: 'call_1_1' } });
    expect(timeline.entries).toEqual(['start:first', 'end:first']);
    expect(eventsOf(events, 'tool.failed').map((event) => [event.callId, event.error.code])).toEqual([
      ['call_1_2', 'skipped'],
      ['call_1_3', 'skipped'],
    ]);
  });

  it('asks once, with no tools allowed, for a summary when the iteration budget runs out', async () => {
    const { outcome, requests } = await runLoop({
      tools: [echo],
      maxIterations: 2,
      script: [
        { calls: [{ name: 'echo', arguments: { id: '1' } }] },
        { calls: [{ name: 'echo', arguments: { id: '2' } }] },
        { text: 'I echoed twice; nothing is left undone.' },
      ],
    });
    expect(outcome).toMatchObject({ kind: 'iteration_exhausted', text: 'I echoed twice; nothing is left undone.' });
    expect(requests.map((request) => request.toolChoice)).toEqual(['auto', 'auto', 'none']);
    expect(requests[2]?.input.at(-1)).toEqual({ type: 'message', role: 'user', content: expect.stringMatching(/summarise/) as unknown });
    expect(requests[2]?.input.at(-2)).toEqual({ type: 'function_call_output', call_id: 'call_2_1', output: 'echo 2' });
  });

  it('does not ask for a summary when the completion policy says not to', async () => {
    const policy: CompletionPolicy = { summariseOnExhaustion: false, onAnswer: () => ({ kind: 'final' }) };
    const { outcome, requests } = await runLoop({
      tools: [echo],
      maxIterations: 1,
      completion: policy,
      script: [{ text: 'working', calls: [{ name: 'echo', arguments: { id: '1' } }] }],
    });
    expect(outcome).toMatchObject({ kind: 'iteration_exhausted', text: 'working' });
    expect(requests).toHaveLength(1);
  });

  it('nudges once when the model answers nothing after tool results', async () => {
    const { outcome, requests } = await runLoop({
      tools: [echo],
      script: [{ calls: [{ name: 'echo', arguments: { id: '1' } }] }, { text: '' }, { text: 'Here is the answer.' }],
    });
    expect(outcome).toMatchObject({ kind: 'answered', text: 'Here is the answer.' });
    expect(requests).toHaveLength(3);
    expect(requests[2]?.input.at(-1)).toEqual({ type: 'message', role: 'user', content: EMPTY_ANSWER_NUDGE });
  });

  it('nudges only once in a turn, and takes the second empty answer as final', async () => {
    const { outcome, requests } = await runLoop({
      tools: [echo],
      script: [
        { calls: [{ name: 'echo', arguments: { id: '1' } }] },
        { text: '' },
        { calls: [{ name: 'echo', arguments: { id: '2' } }] },
        { text: '' },
        { text: 'never asked' },
      ],
    });
    expect(outcome).toMatchObject({ kind: 'answered', text: '' });
    expect(requests).toHaveLength(4);
    const nudges = requests[3]?.input.filter((item) => item.type === 'message' && item.content === EMPTY_ANSWER_NUDGE);
    expect(nudges).toHaveLength(1);
  });

  it('does not nudge an empty first answer: there were no tool results', async () => {
    const { outcome, requests } = await runLoop({ tools: [echo], script: [{ text: '' }] });
    expect(outcome).toMatchObject({ kind: 'answered', text: '' });
    expect(requests).toHaveLength(1);
  });

  it('fails the turn with model_error when the model call fails, keeping the last text', async () => {
    let calls = 0;
    const model: ModelClient = {
      model: 'failing',
      respond: (): Promise<ModelResponse> => {
        calls += 1;
        if (calls === 1) {
          return Promise.resolve({
            text: 'Step one.',
            calls: [{ callId: 'c1', name: 'echo', arguments: '{"id":"a"}' }],
            outputItems: [],
            usage: { inputTokens: 10, outputTokens: 5 },
          });
        }
        return Promise.reject(new ModelError('the provider is overloaded', { status: 529 }));
      },
    };
    const { outcome } = await runLoop({ tools: [echo], model });
    expect(outcome).toEqual({
      kind: 'failed',
      error: { code: 'model_error', message: 'the provider is overloaded' },
      text: 'Step one.',
      iterations: 2,
      usage: { inputTokens: 10, outputTokens: 5 },
    });
  });

  it('refuses two tools with the same identity before the model is ever called', async () => {
    let modelCalls = 0;
    const model: ModelClient = {
      model: 'counting',
      respond: (request, options) => {
        modelCalls += 1;
        return createScriptedModel({ script: [] }).respond(request, options);
      },
    };
    const twin = tool({ name: 'echo', execute: () => Promise.resolve({ content: 'twin' }) });
    await expect(runLoop({ tools: [echo, twin], model })).rejects.toThrow(DuplicateToolError);
    await expect(runLoop({ tools: [echo, twin], model })).rejects.toThrow('two tools in this turn are both named "echo"');
    expect(modelCalls).toBe(0);
    expect(() => createStaticToolCatalog({ tools: [echo, echo], toProviderTools: () => [] })).toThrow(DuplicateToolError);
  });

  it('tells same-named tools apart by namespace', () => {
    const mine = tool({ name: 'search', namespace: 'mail', execute: () => Promise.resolve({ content: 'mail hit' }) });
    const theirs = tool({ name: 'search', namespace: 'docs', execute: () => Promise.resolve({ content: 'docs hit' }) });
    const catalog = createStaticToolCatalog({ tools: [mine, theirs], toProviderTools: () => [] });
    expect([...catalog.callable().keys()]).toEqual(['mail.search', 'docs.search']);
  });

  it('sends image parts back as input_image data URLs', async () => {
    const chart = tool({
      name: 'chart',
      execute: () =>
        Promise.resolve({
          content: [
            { type: 'text', text: 'The chart:' },
            { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
          ],
        }),
    });
    const { requests, events } = await runLoop({ tools: [chart], script: [{ calls: [{ name: 'chart', arguments: { id: 'q3' } }] }] });
    expect(callOutputs(requests[1])).toEqual([
      {
        type: 'function_call_output',
        call_id: 'call_1_1',
        output: [
          { type: 'input_text', text: 'The chart:' },
          { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
        ],
      },
    ]);
    expect(eventsOf(events, 'tool.completed')[0]?.output).toBe('The chart:\n[image image/png]');
  });

  it('joins text-only parts into one string output', async () => {
    const lines = tool({
      name: 'lines',
      execute: () => Promise.resolve({ content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] }),
    });
    const { requests } = await runLoop({ tools: [lines], script: [{ calls: [{ name: 'lines', arguments: { id: 'x' } }] }] });
    expect(outputOf(requests[1], 'call_1_1')).toBe('one\ntwo');
  });

  it('records the repair rung on the events of a repaired call', async () => {
    const { events, requests } = await runLoop({
      tools: [echo],
      script: [{ calls: [{ name: 'echo', arguments: '```json\n{"id":"fenced"}\n```' }] }],
    });
    expect(outputOf(requests[1], 'call_1_1')).toBe('echo fenced');
    expect(eventsOf(events, 'tool.started')[0]).toMatchObject({ repair: 'code_fence', label: 'Using echo', executionMode: 'sequential' });
    expect(eventsOf(events, 'tool.completed')[0]).toMatchObject({ repair: 'code_fence', details: { repair: 'code_fence' } });
  });

  it('gives a tool with only optional parameters {} for empty arguments', async () => {
    const list = tool<{ page?: number | undefined }>({
      name: 'list',
      schema: z.object({ page: z.int().optional() }),
      execute: (params) => Promise.resolve({ content: `page ${params.page ?? 'none'}` }),
    });
    const { events, requests } = await runLoop({ tools: [list], script: [{ calls: [{ name: 'list', arguments: '' }] }] });
    expect(outputOf(requests[1], 'call_1_1')).toBe('page none');
    expect(eventsOf(events, 'tool.started')[0]?.repair).toBe('empty_object');
  });

  it('streams presentation events and replaces the label with the completed one', async () => {
    const report = tool({
      name: 'report',
      describeActivity: (params) => `Writing ${params.id}`,
      describeCompletedActivity: (params) => `Wrote ${params.id} (3 pages)`,
      execute: (_params, context) => {
        context.present({ type: 'progress', data: { percent: 50 } });
        return Promise.resolve({ content: 'written', presentation: [{ type: 'file_card', data: { name: 'r.pdf' } }], completedActorEventIds: ['actor-7'] });
      },
    });
    const { events } = await runLoop({ tools: [report], script: [{ calls: [{ name: 'report', arguments: { id: 'q3' } }] }] });
    expect(events.filter((event) => event.type.startsWith('tool.')).map((event) => event.type)).toEqual([
      'tool.started',
      'tool.presentation',
      'tool.presentation',
      'tool.completed',
    ]);
    expect(eventsOf(events, 'tool.started')[0]?.label).toBe('Writing q3');
    expect(eventsOf(events, 'tool.completed')[0]?.label).toBe('Wrote q3 (3 pages)');
    expect(eventsOf(events, 'tool.presentation').map((event) => event.event.type)).toEqual(['progress', 'file_card']);
    expect(eventsOf(events, 'tool.completed')[0]?.completedActorEventIds).toEqual(['actor-7']);
  });

  it('falls back to a plain label when describeActivity throws or returns nothing', async () => {
    const throwing = tool({
      name: 'odd',
      describeActivity: () => {
        throw new Error('no label');
      },
      execute: () => Promise.resolve({ content: 'ok' }),
    });
    const blank = tool({ name: 'blank', describeActivity: () => '   ', execute: () => Promise.resolve({ content: 'ok' }) });
    const { events } = await runLoop({
      tools: [throwing, blank],
      script: [{ calls: [{ name: 'odd', arguments: { id: 'x' } }, { name: 'blank', arguments: { id: 'y' } }] }],
    });
    expect(eventsOf(events, 'tool.started').map((event) => event.label)).toEqual(['Running odd', 'Running blank']);
  });
});
