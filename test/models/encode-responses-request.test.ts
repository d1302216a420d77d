import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/json.js';
import { encodeResponsesRequest, joinBody, joinText } from '../../src/models/encode-responses-request.js';
import { toResponsesItem } from '../../src/models/item-json.js';
import type { ConversationItem, ModelRequest } from '../../src/models/model-client.js';

const conversation: ConversationItem[] = [
  { type: 'message', role: 'developer', content: 'House rules: "quote" \\ back\u2028slash' },
  { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Look \u{1F440}' }] },
  { type: 'opaque', item: { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAA==' } },
  { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"a.md"}' },
  { type: 'function_call', call_id: 'call_2', name: 'list_events', namespace: 'calendar', arguments: '{}' },
  { type: 'function_call_output', call_id: 'call_1', output: 'line 1\nline 2\ttab' },
];
const tools: JsonObject[] = [{ type: 'function', name: 'read_file', description: 'Reads.', strict: true, parameters: { type: 'object', properties: {} } }];

function responsesRequestJson(options: Parameters<typeof encodeResponsesRequest>[0]): string {
  const body = encodeResponsesRequest(options);
  const bytes = joinBody(body);
  expect(bytes.byteLength).toBe(body.byteLength);
  const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  // The string our own fetch writes is that text, and its UTF-8 is exactly `byteLength` bytes.
  expect(joinText(body)).toBe(text);
  expect(Buffer.byteLength(joinText(body))).toBe(body.byteLength);
  return text;
}

/** The body as the SDK used to build and serialise it, key for key. */
function stringifiedBody(options: { model: string; request: ModelRequest; includeEncryptedReasoning: boolean }): string {
  const { model, request } = options;
  return JSON.stringify({
    model,
    ...(request.instructions === undefined ? {} : { instructions: request.instructions }),
    input: request.input.map(toResponsesItem),
    tools: request.tools,
    ...(request.tools.length === 0 ? {} : { tool_choice: request.toolChoice, parallel_tool_calls: true }),
    store: false,
    stream: true,
    ...(options.includeEncryptedReasoning ? { include: ['reasoning.encrypted_content'] } : {}),
  });
}

describe('encodeResponsesRequest', () => {
  const shapes: { name: string; request: ModelRequest; includeEncryptedReasoning: boolean }[] = [
    { name: 'with instructions, tools and encrypted reasoning', request: { instructions: 'Be brief.', input: conversation, tools, toolChoice: 'auto' }, includeEncryptedReasoning: true },
    { name: 'without instructions or tools', request: { input: conversation, tools: [], toolChoice: 'auto' }, includeEncryptedReasoning: false },
    { name: 'the summary request', request: { input: conversation, tools, toolChoice: 'none' }, includeEncryptedReasoning: false },
    { name: 'an empty conversation', request: { input: [], tools, toolChoice: 'auto' }, includeEncryptedReasoning: false },
  ];
  for (const shape of shapes) {
    it(`makes exactly the text JSON.stringify made of the body: ${shape.name}`, () => {
      const options = { model: 'gpt-5.1', ...shape };
      expect(responsesRequestJson(options)).toBe(stringifiedBody(options));
    });
  }

  it('serialises and encodes an item once and keeps its bytes for the next call of the turn', () => {
    const item: ConversationItem = { type: 'function_call_output', call_id: 'call_9', output: 'first' };
    const request: ModelRequest = { input: [item], tools: [], toolChoice: 'auto' };
    const first = responsesRequestJson({ model: 'm', request, includeEncryptedReasoning: false });
    const stringify = JSON.stringify;
    let calls = 0;
    JSON.stringify = ((...args: Parameters<typeof stringify>) => {
      calls += 1;
      return stringify(...args);
    }) as typeof stringify;
    try {
      expect(responsesRequestJson({ model: 'm', request, includeEncryptedReasoning: false })).toBe(first);
    } finally {
      JSON.stringify = stringify;
    }
    // The model name and the empty tool list, not the item.
    expect(calls).toBe(2);
  });

  it('sends the tool list text it is given instead of serialising the objects', () => {
    const toolsJson = JSON.stringify(tools, null, 2);
    const json = responsesRequestJson({ model: 'm', request: { input: [], tools, toolsJson, toolChoice: 'auto' }, includeEncryptedReasoning: false });
    expect(json).toContain(`"tools":${toolsJson},`);
    expect(JSON.parse(json)).toMatchObject({ tools });
  });
});
