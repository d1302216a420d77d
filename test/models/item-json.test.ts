import { describe, expect, it } from 'vitest';
import { encodeResponsesRequest, joinBody, joinText } from '../../src/models/encode-responses-request.js';
import { deflateItemTexts, isItemTextDeflated, itemJson, jsonOutputItem, toResponsesItem } from '../../src/models/item-json.js';
import type { FunctionCallOutputItem } from '../../src/models/model-client.js';

const OUTPUTS = ['', 'plain', `line "one"\n\ttab \\ back\u2028sep \u0000nul \u{1F440} é ${'x'.repeat(5_000)}`];

describe('a tool output kept as the JSON text it is sent as', () => {
  for (const output of OUTPUTS) {
    it(`has exactly the text of the plain item (${output.length} characters)`, () => {
      const plain: FunctionCallOutputItem = { type: 'function_call_output', call_id: 'call_"1"', output };
      const item = jsonOutputItem('call_"1"', JSON.stringify(output));
      expect(itemJson(item)).toBe(JSON.stringify(toResponsesItem(plain)));
      expect(itemJson(item)).toBe(itemJson(plain));
    });
  }

  it('reads, serialises, spreads, clones and compares as the plain item does', () => {
    const output = OUTPUTS[2] ?? '';
    const plain: FunctionCallOutputItem = { type: 'function_call_output', call_id: 'call_1', output };
    const item = jsonOutputItem('call_1', JSON.stringify(output));
    expect(item.output).toBe(output);
    expect(JSON.stringify(item)).toBe(JSON.stringify(plain));
    expect({ ...item }).toStrictEqual(plain);
    expect(structuredClone(item)).toStrictEqual(plain);
    expect(item).toEqual(plain);
    expect(Object.keys(item)).toEqual(['type', 'call_id', 'output']);
  });

  it('holds no copy of the text: its output is read back from the JSON when asked for', () => {
    const item = jsonOutputItem('call_1', JSON.stringify('the text'));
    const field = Object.getOwnPropertyDescriptor(item, 'output');
    expect(typeof field?.get).toBe('function');
    expect(field && 'value' in field).toBe(false);
    expect(field?.enumerable).toBe(true);
  });

  it('goes into a request as its kept text, and the body is the UTF-8 of what JSON.stringify made of the plain request', () => {
    const output = OUTPUTS[2] ?? '';
    const item = jsonOutputItem('call_1', JSON.stringify(output));
    const plain: FunctionCallOutputItem = { type: 'function_call_output', call_id: 'call_1', output };
    const encode = (input: FunctionCallOutputItem) => encodeResponsesRequest({ model: 'm', request: { input: [input], tools: [], toolChoice: 'auto' }, includeEncryptedReasoning: false });
    expect(encode(item).pieces).toContain(itemJson(item));
    const joined = joinBody(encode(item));
    expect(joined.byteLength).toBe(encode(item).byteLength);
    expect(new TextDecoder('utf-8', { fatal: true }).decode(joined)).toBe(joinBody(encode(plain)).toString('utf8'));
    expect(JSON.parse(joined.toString('utf8'))).toMatchObject({ input: [{ type: 'function_call_output', call_id: 'call_1', output }] });
  });
});

describe('a conversation item whose text is kept deflated', () => {
  const output = 'A line of a file read, with "quotes" and ünïcødé.\n'.repeat(80);

  it('reads, serialises and goes into a request exactly as before', () => {
    const plain: FunctionCallOutputItem = { type: 'function_call_output', call_id: 'call_1', output };
    const item = jsonOutputItem('call_1', JSON.stringify(output));
    const before = itemJson(item);
    const encode = (input: FunctionCallOutputItem) => encodeResponsesRequest({ model: 'm', request: { input: [input], tools: [], toolChoice: 'auto' }, includeEncryptedReasoning: false });
    const bodyBefore = joinBody(encode(item));
    deflateItemTexts([item]);
    expect(isItemTextDeflated(item)).toBe(true);
    expect(itemJson(item)).toBe(before);
    expect(item.output).toBe(output);
    expect({ ...item }).toStrictEqual(plain);
    expect(JSON.stringify(item)).toBe(JSON.stringify(plain));
    const body = joinBody(encode(item));
    expect(body.equals(bodyBefore)).toBe(true);
    expect(joinText(encode(item))).toBe(bodyBefore.toString('utf8'));
    expect(encode(item).byteLength).toBe(body.byteLength);
  });

  it('leaves short texts and items never sent as they are', () => {
    const short = jsonOutputItem('call_2', JSON.stringify('short'));
    const unsent: FunctionCallOutputItem = { type: 'function_call_output', call_id: 'call_3', output };
    deflateItemTexts([short, unsent]);
    expect(isItemTextDeflated(short)).toBe(false);
    expect(isItemTextDeflated(unsent)).toBe(false);
    expect(itemJson(unsent)).toBe(JSON.stringify(toResponsesItem(unsent)));
  });
});
