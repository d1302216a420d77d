import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
import { createTestModel, respondCollecting } from './model-test-kit.js';

describe('OpenAI Responses model: streaming a response', () => {
  let provider: FakeResponsesProvider;
  beforeEach(async () => {
    provider = await startFakeResponsesProvider();
  });
  afterEach(async () => {
    await provider.close();
  });

  it('forwards text deltas in order and returns the whole text as an assistant message', async () => {
    provider.enqueue({ text: ['Hel', 'lo, ', 'wor', 'ld!'] });
    const { model } = createTestModel(provider);

    const { response, deltas } = await respondCollecting(model);

    expect(deltas).toEqual(['Hel', 'lo, ', 'wor', 'ld!']);
    expect(response.text).toBe('Hello, world!');
    expect(response.calls).toEqual([]);
    expect(response.outputItems).toEqual([{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello, world!' }] }]);
  });

  it('keeps characters outside the BMP whole when they arrive in separate deltas', async () => {
    provider.enqueue({ text: ['Ship it ', '\u{1F680}', ' — ', 'naïve café'] });
    const { model } = createTestModel(provider);

    const { response, deltas } = await respondCollecting(model);

    expect(deltas.join('')).toBe('Ship it \u{1F680} — naïve café');
    expect(response.text).toBe('Ship it \u{1F680} — naïve café');
  });

  it('assembles several function calls from argument deltas, in the order the model made them', async () => {
    provider.enqueue({
      calls: [
        { name: 'read_file', callId: 'call_a', arguments: ['{"pa', 'th":"no', 'tes.md"}'] },
        { name: 'search', callId: 'call_b', namespace: 'web', arguments: '{"query":"weather in Zürich","limit":3}' },
        { name: 'noop', callId: 'call_c', arguments: '' },
      ],
    });
    const { model } = createTestModel(provider);

    const { response, deltas } = await respondCollecting(model);

    expect(deltas).toEqual([]);
    expect(response.text).toBe('');
    expect(response.calls).toEqual([
      { callId: 'call_a', name: 'read_file', arguments: '{"path":"notes.md"}' },
      { callId: 'call_b', name: 'search', namespace: 'web', arguments: '{"query":"weather in Zürich","limit":3}' },
      { callId: 'call_c', name: 'noop', arguments: '' },
    ]);
    expect(response.outputItems).toEqual([
      { type: 'function_call', call_id: 'call_a', name: 'read_file', arguments: '{"path":"notes.md"}' },
      { type: 'function_call', call_id: 'call_b', name: 'search', namespace: 'web', arguments: '{"query":"weather in Zürich","limit":3}' },
      { type: 'function_call', call_id: 'call_c', name: 'noop', arguments: '' },
    ]);
  });

  it('records the usage the provider reports', async () => {
    provider.enqueue({ text: 'Counted.', usage: { inputTokens: 1234, outputTokens: 56 } });
    const { model } = createTestModel(provider);

    const { response } = await respondCollecting(model);

    expect(response.usage).toEqual({ inputTokens: 1234, outputTokens: 56 });
  });

  it('passes reasoning and tool-search items on unchanged, in output order', async () => {
    const reasoning = { id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'gAAAA-opaque==' };
    const toolSearch = { id: 'ts_1', type: 'tool_search_call', status: 'completed', arguments: { query: 'calendar' }, execution: 'server' };
    provider.enqueue({ items: [reasoning, toolSearch], text: 'Looking.', calls: [{ name: 'list_events', callId: 'call_1', arguments: '{}' }] });
    const { model } = createTestModel(provider);

    const { response } = await respondCollecting(model);

    expect(response.outputItems).toEqual([
      { type: 'opaque', item: reasoning },
      { type: 'opaque', item: toolSearch },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.' }] },
      { type: 'function_call', call_id: 'call_1', name: 'list_events', arguments: '{}' },
    ]);
  });

  it('rebuilds the output from the deltas when the final response carries no output', async () => {
    provider.enqueue({
      text: 'Terse server.',
      calls: [{ name: 'ping', callId: 'call_t', namespace: 'net', arguments: ['{"host":', '"a"}'] }],
      omitFinalOutput: true,
      usage: { inputTokens: 3, outputTokens: 4 },
    });
    const { model } = createTestModel(provider);

    const { response } = await respondCollecting(model);

    expect(response.text).toBe('Terse server.');
    expect(response.calls).toEqual([{ callId: 'call_t', name: 'ping', namespace: 'net', arguments: '{"host":"a"}' }]);
    expect(response.usage).toEqual({ inputTokens: 3, outputTokens: 4 });
  });

  it('returns what arrived of an incomplete response, cut-off arguments included, and logs the reason', async () => {
    provider.enqueue({
      text: 'Writing the file now.',
      calls: [{ name: 'write_file', callId: 'call_w', arguments: ['{"path":"a.md","content":"Once up', 'on a ti'] }],
      end: 'incomplete',
      incompleteReason: 'max_output_tokens',
      usage: { inputTokens: 10, outputTokens: 4096 },
    });
    const { model, records } = createTestModel(provider);

    const { response } = await respondCollecting(model);

    expect(response.text).toBe('Writing the file now.');
    expect(response.calls).toEqual([{ callId: 'call_w', name: 'write_file', arguments: '{"path":"a.md","content":"Once upon a ti' }]);
    expect(response.usage).toEqual({ inputTokens: 10, outputTokens: 4096 });
    expect(records).toContainEqual(expect.objectContaining({ level: 40, reason: 'max_output_tokens' }));
    expect(provider.requestCount).toBe(1);
  });

  it('treats a refusal as the assistant text', async () => {
    provider.enqueue({
      items: [{ id: 'msg_r', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] }],
    });
    const { model } = createTestModel(provider);

    const { response } = await respondCollecting(model);

    expect(response.text).toBe('I cannot help with that.');
    expect(response.outputItems).toEqual([{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'I cannot help with that.' }] }]);
  });

  it('answers many requests in a row over the same client', async () => {
    provider.setDefault((request) => ({ text: `echo ${request.index}` }));
    const { model } = createTestModel(provider);

    const texts: string[] = [];
    for (let index = 0; index < 20; index += 1) texts.push((await respondCollecting(model)).response.text);

    expect(texts).toEqual(Array.from({ length: 20 }, (_, index) => `echo ${index}`));
  });
});
