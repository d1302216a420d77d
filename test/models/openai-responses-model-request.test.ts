import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/json.js';
import type { ConversationItem, ModelRequest } from '../../src/models/model-client.js';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
import { createTestModel, respondCollecting, testApiKey } from './model-test-kit.js';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** Definitions with the awkward parts real ones have: namespaces, deferral, raw constraints, odd key order, unicode. */
const tools: JsonObject[] = deepFreeze([
  {
    type: 'function',
    name: 'read_file',
    description: 'Reads a file from the agent home. Paths are relative: "notes/ä.md".',
    strict: true,
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', minLength: 1 }, limit: { type: 'integer', minimum: 1, maximum: 1048576 } },
      required: ['path', 'limit'],
      additionalProperties: false,
    },
  },
  {
    type: 'namespace',
    name: 'calendar',
    description: 'Calendar tools \u{1F4C5}',
    tools: [
      { type: 'function', name: 'list_events', defer_loading: true, parameters: { required: [], type: 'object', properties: {} }, strict: false, description: 'Lists events.' },
    ],
  },
  { type: 'tool_search' },
]);

describe('OpenAI Responses model: the request it sends', () => {
  let provider: FakeResponsesProvider;
  beforeEach(async () => {
    provider = await startFakeResponsesProvider();
    provider.setDefault({ text: 'ok' });
  });
  afterEach(async () => {
    await provider.close();
  });

  it('sends the tool definitions byte for byte, without changing the objects it was given', async () => {
    const { model } = createTestModel(provider);
    const before = JSON.stringify(tools);

    await respondCollecting(model, { input: [{ type: 'message', role: 'user', content: 'hi' }], tools, toolChoice: 'auto' });

    const [request] = provider.requests;
    expect(JSON.stringify(request!.body.tools)).toBe(JSON.stringify(tools));
    expect(request!.rawBody).toContain(`"tools":${JSON.stringify(tools)}`);
    expect(JSON.stringify(tools)).toBe(before);
  });

  it('sends the catalog\'s own text of the tool list as it is, and the whole body as UTF-8 JSON', async () => {
    const { model } = createTestModel(provider);
    // The same definitions in another spelling: the text given is what goes out, not a re-serialisation.
    const toolsJson = JSON.stringify(tools, null, 1);

    await respondCollecting(model, { input: [{ type: 'message', role: 'user', content: 'grüß dich \u{1F44B}' }], tools, toolsJson, toolChoice: 'auto' });

    const [request] = provider.requests;
    expect(request!.rawBody).toContain(`"tools":${toolsJson}`);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(Number(request!.headers['content-length'])).toBe(Buffer.byteLength(request!.rawBody));
    expect(request!.body.input).toEqual([{ type: 'message', role: 'user', content: 'grüß dich \u{1F44B}' }]);
  });

  it('sends store:false, stream:true, parallel tool calls, the model, the instructions and the tool choice', async () => {
    const { model } = createTestModel(provider);

    await respondCollecting(model, { instructions: 'Be brief.', input: [{ type: 'message', role: 'user', content: 'hi' }], tools, toolChoice: 'none' });

    const { body, headers, url, method } = provider.requests[0]!;
    expect(method).toBe('POST');
    expect(url).toBe('/v1/responses');
    expect(body).toMatchObject({
      model: 'fake-model',
      instructions: 'Be brief.',
      store: false,
      stream: true,
      parallel_tool_calls: true,
      tool_choice: 'none',
    });
    expect(body).not.toHaveProperty('previous_response_id');
    expect(headers.authorization).toBe(`Bearer ${testApiKey}`);
  });

  it('leaves instructions out when there are none', async () => {
    const { model } = createTestModel(provider);

    await respondCollecting(model, { input: [{ type: 'message', role: 'user', content: 'hi' }], tools: [], toolChoice: 'auto' });

    expect(provider.requests[0]!.body).not.toHaveProperty('instructions');
    expect(provider.requests[0]!.body.tools).toEqual([]);
  });

  it('sends the whole conversation every time, unwrapping opaque items to what the provider sent', async () => {
    const reasoning = { id: 'rs_9', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking' }], encrypted_content: 'gAAAA==' };
    const input: ConversationItem[] = [
      { type: 'message', role: 'developer', content: 'House rules.' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Look at this' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' }] },
      { type: 'opaque', item: reasoning },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Reading it.' }] },
      { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"a.md"}' },
      { type: 'function_call', call_id: 'call_2', name: 'list_events', namespace: 'calendar', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'file contents' },
      { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'no events' }] },
    ];
    const request: ModelRequest = { input, tools: [], toolChoice: 'auto' };
    const { model } = createTestModel(provider);

    await respondCollecting(model, request);

    expect(provider.requests[0]!.body.input).toEqual([
      { type: 'message', role: 'developer', content: 'House rules.' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Look at this' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' }] },
      reasoning,
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Reading it.' }] },
      { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"a.md"}' },
      { type: 'function_call', call_id: 'call_2', name: 'list_events', namespace: 'calendar', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'file contents' },
      { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'no events' }] },
    ]);
  });

  it('feeds a response back as input the provider accepts: the output items round-trip', async () => {
    provider.enqueue({ text: 'Checking.', calls: [{ name: 'search', namespace: 'web', callId: 'call_s', arguments: '{"q":"x"}' }] });
    const { model } = createTestModel(provider);
    const first = await respondCollecting(model);

    const input: ConversationItem[] = [
      { type: 'message', role: 'user', content: 'hi' },
      ...first.response.outputItems,
      { type: 'function_call_output', call_id: 'call_s', output: 'found' },
    ];
    await respondCollecting(model, { input, tools: [], toolChoice: 'auto' });

    expect(provider.requests[1]!.body.input).toEqual([
      { type: 'message', role: 'user', content: 'hi' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
      { type: 'function_call', call_id: 'call_s', name: 'search', namespace: 'web', arguments: '{"q":"x"}' },
      { type: 'function_call_output', call_id: 'call_s', output: 'found' },
    ]);
  });

  it('asks for encrypted reasoning for reasoning models only, unless told otherwise', async () => {
    await respondCollecting(createTestModel(provider, { model: 'gpt-5.1' }).model);
    await respondCollecting(createTestModel(provider, { model: 'gpt-4.1' }).model);
    await respondCollecting(createTestModel(provider, { model: 'gpt-4.1', includeEncryptedReasoning: true }).model);

    expect(provider.requests.map((request) => request.body['include'])).toEqual([['reasoning.encrypted_content'], undefined, ['reasoning.encrypted_content']]);
  });
});
