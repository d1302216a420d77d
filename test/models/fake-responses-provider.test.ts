import OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { request as httpRequest } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';

interface EventData {
  readonly type: string;
  readonly sequence_number: number;
  readonly delta?: string;
  readonly item?: { readonly id: string; readonly [field: string]: unknown };
  readonly response?: { readonly id: string; readonly output: unknown; readonly [field: string]: unknown };
}

interface Frame {
  readonly event: string;
  readonly data: EventData;
}

async function postRaw(provider: FakeResponsesProvider, body: unknown = { model: 'm', input: 'hi', stream: true }): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(`${provider.baseUrl}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Strict SSE framing: every block is exactly `event: <type>` then `data: <json>`, blank-line separated. */
function parseFrames(text: string): Frame[] {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      const match = /^event: ([a-z_.]+)\ndata: (.+)$/.exec(block);
      expect(match, block).not.toBeNull();
      return { event: match![1]!, data: JSON.parse(match![2]!) as EventData };
    });
}

describe('fake Responses provider', () => {
  let provider: FakeResponsesProvider;
  beforeEach(async () => {
    provider = await startFakeResponsesProvider();
  });
  afterEach(async () => {
    await provider.close();
  });

  it('streams a text-and-calls response as well-formed, numbered SSE events in the documented order', async () => {
    provider.enqueue({ text: 'Hi there you', calls: [{ name: 'f', callId: 'call_1', namespace: 'ns', arguments: '{"a":1,"b":2}' }], usage: { inputTokens: 7, outputTokens: 9 } });

    const { status, headers, text } = await postRaw(provider);
    const frames = parseFrames(text);

    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(frames.map((frame) => frame.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    frames.forEach((frame, index) => {
      expect(frame.data.type).toBe(frame.event);
      expect(frame.data.sequence_number).toBe(index);
    });
    const message = frames[2]!.data.item!;
    const textDeltas = frames.filter((frame) => frame.event === 'response.output_text.delta');
    expect(textDeltas.map((frame) => frame.data.delta).join('')).toBe('Hi there you');
    for (const frame of textDeltas) expect(frame.data).toMatchObject({ item_id: message.id, output_index: 0, content_index: 0 });
    const call = frames[10]!.data.item!;
    expect(call).toMatchObject({ type: 'function_call', call_id: 'call_1', name: 'f', namespace: 'ns', status: 'in_progress', arguments: '' });
    const argumentDeltas = frames.filter((frame) => frame.event === 'response.function_call_arguments.delta');
    for (const frame of argumentDeltas) expect(frame.data).toMatchObject({ item_id: call.id, output_index: 1 });
    expect(argumentDeltas.map((frame) => frame.data.delta).join('')).toBe('{"a":1,"b":2}');
    const completed = frames.at(-1)!.data.response!;
    expect(completed).toMatchObject({ object: 'response', status: 'completed', model: 'm', usage: { input_tokens: 7, output_tokens: 9, total_tokens: 16 } });
    expect(completed.id).toBe(frames[0]!.data.response!.id);
    expect(completed.output).toEqual([
      { id: message.id, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Hi there you' }] },
      { id: call.id, type: 'function_call', call_id: 'call_1', name: 'f', namespace: 'ns', status: 'completed', arguments: '{"a":1,"b":2}' },
    ]);
  });

  it('is understood by the official SDK event for event', async () => {
    provider.enqueue({ text: 'ok', end: 'incomplete', incompleteReason: 'max_output_tokens' });
    const client = new OpenAI({ apiKey: 'k', baseURL: provider.baseUrl, maxRetries: 0, logLevel: 'off' });

    const types: string[] = [];
    let last: ResponseStreamEvent | undefined;
    for await (const event of await client.responses.create({ model: 'm', input: 'hi', stream: true })) {
      types.push(event.type);
      last = event;
    }

    expect(types).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.incomplete']);
    expect(last?.type === 'response.incomplete' ? last.response : undefined).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [{ type: 'message', status: 'incomplete' }] });
  });

  it('answers HTTP errors with the JSON error body and retry headers', async () => {
    provider.enqueue({ status: 429, retryAfter: 3, retryAfterMs: 2500, error: { message: 'Slow down', type: 'requests', code: 'rate_limit_exceeded' } });

    const { status, headers, text } = await postRaw(provider);

    expect(status).toBe(429);
    expect(headers.get('retry-after')).toBe('3');
    expect(headers.get('retry-after-ms')).toBe('2500');
    expect(JSON.parse(text)).toEqual({ error: { message: 'Slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' } });
  });

  it('says clearly when a test forgot to queue a step', async () => {
    const { status, text } = await postRaw(provider);

    expect(status).toBe(400);
    expect(JSON.parse(text).error.message).toMatch(/no step queued for request #1/);
  });

  it('records each request raw and parsed, and lets steps be chosen from the request', async () => {
    provider.setDefault((request) => ({ text: `you said ${String(request.body.input)}` }));
    const body = { model: 'm', input: 'ping', stream: true, tools: [{ type: 'function', name: 'é' }] };

    const { text } = await postRaw(provider, body);

    const recorded = await provider.waitForRequest(1);
    expect(recorded.rawBody).toBe(JSON.stringify(body));
    expect(recorded.body).toEqual(body);
    expect(recorded.headers['content-type']).toBe('application/json');
    expect(parseFrames(text).at(-1)!.data.response!.output).toMatchObject([{ content: [{ text: 'you said ping' }] }]);
    expect(await recorded.ended).toMatchObject({ how: 'completed' });
  });

  it('records a client that goes away from a hanging stream', async () => {
    provider.enqueue({ text: 'hold', hang: { afterEvents: 1 } });

    const controller = new AbortController();
    const response = await fetch(`${provider.baseUrl}/responses`, { method: 'POST', body: '{}', signal: controller.signal });
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toMatch(/^event: response.created\n/);
    controller.abort();

    const gone = await provider.waitForDisconnect(1);
    expect(gone.index).toBe(0);
    expect((await gone.ended).how).toBe('client-disconnected');
  });

  it('closes promptly with streams hanging and idle keep-alive sockets, leaving nothing behind', async () => {
    provider.setDefault({ text: 'x', hang: true });
    const statuses: number[] = [];
    const hanging = Array.from({ length: 3 }, () =>
      new Promise<string>((resolve) => {
        const outgoing = httpRequest(`${provider.baseUrl}/responses`, { method: 'POST' }, (incoming) => {
          statuses.push(incoming.statusCode ?? 0);
          incoming.on('data', () => undefined);
          incoming.on('error', () => { resolve('error'); });
          incoming.on('close', () => { resolve('closed'); });
        });
        outgoing.on('error', () => { resolve('error'); });
        outgoing.end('{}');
      }),
    );
    await provider.waitForRequest(3);

    await provider.close();

    expect(await Promise.all(hanging)).toHaveLength(3);
    expect(statuses).toEqual([200, 200, 200]);
    expect(provider.disconnects).toHaveLength(0);
    expect((await provider.requests[0]!.ended).how).toBe('server-destroyed');
    await expect(fetch(`${provider.baseUrl}/responses`, { method: 'POST', body: '{}' })).rejects.toThrow();
  });

  it('serves a thousand requests over keep-alive connections without keeping bodies when asked not to', async () => {
    const quiet = await startFakeResponsesProvider({ recordRequests: false });
    try {
      quiet.setDefault({ text: 'fast answer here', calls: [{ name: 'f', arguments: '{"x":1}' }] });
      const total = 1000;
      let next = 0;
      const worker = async (): Promise<number> => {
        let ok = 0;
        while (next < total) {
          next += 1;
          const { status, text } = await postRaw(quiet);
          if (status === 200 && text.includes('response.completed')) ok += 1;
        }
        return ok;
      };
      const done = await Promise.all(Array.from({ length: 16 }, worker));

      expect(done.reduce((sum, count) => sum + count, 0)).toBe(total);
      expect(quiet.requestCount).toBe(total);
      expect(quiet.requests).toHaveLength(0);
    } finally {
      await quiet.close();
    }
  });
});
