import { describe, expect, it } from 'vitest';
import type { ModelClient, ModelRequest } from '../../src/models/model-client.js';
import { createScriptedModel, type ScriptStep } from '../../src/models/scripted-model.js';
import type { WorkerAgentTool } from '../../src/tools/define-worker-tool.js';
import { encodeResponsesRequest, joinBody } from '../../src/models/encode-responses-request.js';
import { itemJson, toResponsesItem } from '../../src/models/item-json.js';
import { takeOutputJson, stringifyWithOutputJson, withOutputJson } from '../../src/output-json.js';
import { numberEvent } from '../../src/turns/event-window.js';
import { callOutputs, eventsOf, runLoop, tool } from './loop-harness.js';

/** Runs the loop, keeping the requests as the loop made them (the harness's own record is a copy). */
async function runKeepingRequests(tools: readonly WorkerAgentTool[], script: readonly ScriptStep[]): Promise<{ requests: ModelRequest[]; events: Awaited<ReturnType<typeof runLoop>>['events'] }> {
  const inner = createScriptedModel({ script });
  const requests: ModelRequest[] = [];
  const model: ModelClient = {
    model: inner.model,
    respond(request, options) {
      requests.push(request);
      return inner.respond(request, options);
    },
  };
  const { events } = await runLoop({ tools, model });
  return { requests, events };
}

/** An output with everything JSON escapes, and a label that holds what a stand-in might look like. */
const OUTPUT = `line "one"\n\ttab \\ back\u2028sep \u0000nul \u{1F440} ${'x'.repeat(500)}`;

/** Runs `body` with JSON.stringify watched; returns every text it made. */
function textsStringifyMade(body: () => void): string[] {
  const stringify = JSON.stringify;
  const made: string[] = [];
  JSON.stringify = ((...args: Parameters<typeof stringify>) => {
    const text = stringify(...args);
    made.push(text);
    return text;
  }) as typeof JSON.stringify;
  try {
    body();
  } finally {
    JSON.stringify = stringify;
  }
  return made;
}

describe('stringifyWithOutputJson', () => {
  it('makes exactly the text JSON.stringify makes, with output in its place among the fields', () => {
    const values = [
      { type: 'tool.completed', label: '\u0000 looks like a stand-in', output: OUTPUT, details: { output: 'inner' }, durationMs: 3 },
      { output: OUTPUT },
      { type: 'function_call_output', call_id: 'call_1', output: '' },
    ];
    for (const value of values) expect(stringifyWithOutputJson(value, JSON.stringify(value.output))).toBe(JSON.stringify(value));
  });

  it('writes the known text rather than serialising the output again', () => {
    expect(stringifyWithOutputJson({ a: 1, output: 'as it is', b: 2 }, '"as noted"')).toBe('{"a":1,"output":"as noted","b":2}');
  });

  it('is JSON.stringify without a known text or an output field', () => {
    expect(stringifyWithOutputJson({ output: 'x' }, undefined)).toBe('{"output":"x"}');
    expect(stringifyWithOutputJson({ text: 'x' }, '"ignored"')).toBe('{"text":"x"}');
  });

  it('knows a text only for the object it was noted on, and forgets it once taken', () => {
    const item = withOutputJson({ output: 'a' }, '"a"');
    expect(takeOutputJson({ ...item })).toBeUndefined();
    expect(takeOutputJson(item)).toBe('"a"');
    expect(takeOutputJson(item)).toBeUndefined();
  });
});

describe('a tool output through the loop', () => {
  it('is escaped once for its event and the next request, and both texts are what JSON.stringify makes', async () => {
    const reader = tool({ name: 'read', execute: () => Promise.resolve({ content: OUTPUT }) });
    const { requests, events } = await runKeepingRequests([reader], [{ text: 'Reading.', calls: [{ name: 'read', arguments: { id: 'a' } }] }, { text: 'Done.' }]);
    const [completed] = eventsOf(events, 'tool.completed');
    const [item] = callOutputs(requests[1]);
    const escaped = JSON.stringify(OUTPUT);

    const second = requests[1];
    if (completed === undefined || second === undefined) throw new Error('the loop did not complete a call and ask again');
    let eventJson = '';
    let body = '';
    const made = textsStringifyMade(() => {
      eventJson = numberEvent({ turnId: 'turn_1', seq: 2, at: '2026-12-02T00:00:00.000Z', body: completed }).stored.json;
      const encoded = encodeResponsesRequest({ model: 'm', request: second, includeEncryptedReasoning: false });
      body = joinBody(encoded).toString('utf8');
    });
    // Nothing JSON.stringify made in either holds the output's escaped text: it was spliced in,
    // and then forgotten by the event and the item.
    expect(made.filter((text) => text.includes(escaped))).toEqual([]);
    expect(takeOutputJson(completed)).toBeUndefined();
    expect(item === undefined ? 'missing' : takeOutputJson(item)).toBeUndefined();
    const { type, ...fields } = completed;
    expect(eventJson).toBe(JSON.stringify({ type, turnId: 'turn_1', seq: 2, at: '2026-12-02T00:00:00.000Z', ...fields }));
    expect(body).toContain(JSON.stringify(toResponsesItem(second.input.at(-1) ?? { type: 'message', role: 'user', content: '' })));
    expect(JSON.parse(body)).toMatchObject({ input: expect.arrayContaining([{ type: 'function_call_output', call_id: item?.call_id, output: OUTPUT }]) });
  });

  it('is kept in the conversation only as the JSON text it is sent as, its text left to its event', async () => {
    const reader = tool({ name: 'read', execute: () => Promise.resolve({ content: OUTPUT }) });
    const { requests } = await runKeepingRequests([reader], [{ text: 'Reading.', calls: [{ name: 'read', arguments: { id: 'a' } }] }, { text: 'Done.' }]);
    const [item] = callOutputs(requests[1]);
    if (item === undefined) throw new Error('the loop did not feed the output back');
    // An accessor, not a data field holding the text (see jsonOutputItem); what it reads is the text.
    const field = Object.getOwnPropertyDescriptor(item, 'output');
    expect(typeof field?.get).toBe('function');
    expect(item.output).toBe(OUTPUT);
    expect(itemJson(item)).toBe(JSON.stringify({ type: 'function_call_output', call_id: item.call_id, output: OUTPUT }));
  });

  it('of image parts is serialised the ordinary way', async () => {
    const picture = tool({
      name: 'look',
      execute: () => Promise.resolve({ content: [{ type: 'text', text: 'a picture' }, { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' }] }),
    });
    const { requests, events } = await runKeepingRequests([picture], [{ text: 'Looking.', calls: [{ name: 'look', arguments: { id: 'a' } }] }, { text: 'Done.' }]);
    const [completed] = eventsOf(events, 'tool.completed');
    const [item] = callOutputs(requests[1]);
    expect(completed === undefined ? 'missing' : takeOutputJson(completed)).toBeUndefined();
    expect(item === undefined ? 'missing' : takeOutputJson(item)).toBeUndefined();
    expect(item?.output).toEqual([
      { type: 'input_text', text: 'a picture' },
      { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
    ]);
  });
});
