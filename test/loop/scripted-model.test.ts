import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/models/model-client.js';
import { createScriptedModel } from '../../src/models/scripted-model.js';

const request: ModelRequest = { input: [{ type: 'message', role: 'user', content: 'hi' }], tools: [], toolChoice: 'auto' };

async function respond(model: ReturnType<typeof createScriptedModel>, signal = new AbortController().signal) {
  const deltas: string[] = [];
  const response = await model.respond(request, { signal, onTextDelta: (delta) => deltas.push(delta) });
  return { response, deltas };
}

describe('the scripted model', () => {
  it('answers one step per request, in the shapes a provider uses', async () => {
    const model = createScriptedModel({
      script: [
        { text: 'Reading.', calls: [{ name: 'read_file', arguments: { path: 'a.md' } }, { name: 'search', namespace: 'mail', arguments: '{"q":', callId: 'mine' }] },
        { text: 'Done.' },
      ],
    });
    const first = await respond(model);
    expect(first.response).toEqual({
      text: 'Reading.',
      calls: [
        { callId: 'call_1_1', name: 'read_file', arguments: '{"path":"a.md"}' },
        { callId: 'mine', name: 'search', namespace: 'mail', arguments: '{"q":' },
      ],
      outputItems: [
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Reading.' }] },
        { type: 'function_call', call_id: 'call_1_1', name: 'read_file', arguments: '{"path":"a.md"}' },
        { type: 'function_call', call_id: 'mine', name: 'search', arguments: '{"q":', namespace: 'mail' },
      ],
      usage: { inputTokens: 0, outputTokens: 0 },
    });
    expect((await respond(model)).response.text).toBe('Done.');
  });

  it('streams text in pieces that add up to the whole', async () => {
    const text = 'x'.repeat(50) + '🎉 end';
    const { deltas, response } = await respond(createScriptedModel({ script: [{ text }] }));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(text);
    expect(response.text).toBe(text);
  });

  it('answers with no calls and no text once the script runs out', async () => {
    const model = createScriptedModel({ script: [] });
    expect((await respond(model)).response).toEqual({ text: '', calls: [], outputItems: [], usage: { inputTokens: 0, outputTokens: 0 } });
  });

  it('refuses to answer on an aborted signal, and stops waiting when aborted mid-delay', async () => {
    const aborted = new AbortController();
    aborted.abort();
    await expect(respond(createScriptedModel({ script: [{ text: 'x' }] }), aborted.signal)).rejects.toThrow();
    const later = new AbortController();
    setTimeout(() => {
      later.abort();
    }, 20);
    await expect(respond(createScriptedModel({ script: [{ text: 'x', delayMs: 5_000 }] }), later.signal)).rejects.toThrow();
  });
});
